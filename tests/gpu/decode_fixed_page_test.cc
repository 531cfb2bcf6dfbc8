// Compiled-in page sizes (session 30, variant field page_size, FixedPageTileLoader): a batch plan
// over pages of a power of two up to a tile (1 .. 64 keys) takes a kernel with the page size
// compiled in, whose loader finds a thread's rows from the page ids alone. Checked against the
// fp64 reference at every such page size against every rows-a-pass of the loader (4 at 16-bit
// D 256, 8 at 16-bit D 128, 16 at 16-bit D 64 and fp8 D 128, 32 at fp8 D 64), lengths at the page
// boundaries, both layouts, sliding windows whose first key is not on a page (Plan rounds it down
// to one; the kernel masks the rest), and each plan's items checked to start on a page. The run-
// time form (FLASHJIT_DECODE_FIXED_PAGE=0) is checked at the same page sizes beside it.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "attention/decode_params.cuh"
#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_spec.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

// Plans made in this scope take the compiled-in page size (1) or read it at run time (0).
struct ForceFixedPage {
  explicit ForceFixedPage(int mode) { ops::SetDecodeFixedPageForTesting(mode); }
  ~ForceFixedPage() { ops::SetDecodeFixedPageForTesting(-1); }
};

// Every non-empty work item of the case's plan starts on a page.
void CheckItemsOnPages(const BatchCase& c, std::mt19937& rng) {
  if (DryRun()) return;
  PagedCache pc = BuildCache(c, rng);
  PlannedCase planned = PlanCase(c, pc, c.options);
  const std::vector<attention::DecodeWorkItem> work = DownloadPlanWork(planned.ws);
  int off_page = 0;
  for (const attention::DecodeWorkItem& w : work)
    off_page += w.kv_end > w.kv_start && w.kv_start % c.page_size != 0;
  INFO(Describe(c) << ": work items " << work.size());
  CHECK(!work.empty());
  CHECK(off_page == 0);
}

TEST_CASE("batch decode: compiled-in page sizes", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  // (head dim, KV dtype): the loader's rows a pass 4, 8, 16, 16, 32.
  const std::vector<std::pair<int, DType>> dims = {{256, DType::kBF16},
                                                   {128, DType::kBF16},
                                                   {64, DType::kF16},
                                                   {128, DType::kF8E4M3},
                                                   {64, DType::kF8E5M2}};
  const std::vector<int> page_sizes = {1, 2, 4, 8, 16, 32, 64};
  for (int fixed : {1, 0}) {
    ForceFixedPage force(fixed);
    for (size_t k = 0; k < page_sizes.size(); ++k)
      for (size_t j = 0; j < dims.size(); ++j) {
        // The compiled-in form at every pair; the run-time form at a third of them.
        if (!fixed && (j + k) % 3) continue;
        const int ps = page_sizes[k];
        const auto& [d, kv] = dims[j];
        BatchCase c;
        c.page_size = ps;
        c.head_dim = d;
        c.kv_dtype = kv;
        c.q_dtype = kv == DType::kF16 ? DType::kF16 : DType::kBF16;
        c.num_qo_heads = (j + k) % 2 ? 8 : 20;  // groups of 4, and of 10 (odd)
        c.num_kv_heads = 2;
        c.layout = (j + k) % 2 ? KVLayout::kHND : KVLayout::kNHD;
        c.combined = (j + k) % 3 != 1;
        c.lens = MixedLengths(10, ps == 1 ? 700 : 2500, ps, rng);
        // A window whose first key falls inside a page for most lengths.
        if ((j + k) % 2) c.options.window_left = 37 + static_cast<int>(k) * 19;
        RunBatch(c, rng);
        if (fixed && c.options.window_left >= 0) CheckItemsOnPages(c, rng);
      }
  }
}

// Splits of one long request (chunks, tail pieces and merges) and the persistent grid's short
// units, with a window, at page 16 and page 1.
TEST_CASE("batch decode: compiled-in page sizes, splits and windows", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  for (int ps : {16, 1}) {
    BatchCase one;
    one.page_size = ps;
    one.num_qo_heads = 32;
    one.num_kv_heads = 8;
    one.lens = {ps == 1 ? 4099 : 20011};
    RunBatch(one, rng);
    one.options.window_left = 3001;
    RunBatch(one, rng);
    CheckItemsOnPages(one, rng);
    BatchCase many;  // a plan of many short units (persistent by default at 16-bit D 128)
    many.page_size = ps;
    many.num_qo_heads = 32;
    many.num_kv_heads = 8;
    many.lens.assign(64, 900);
    many.lens[5] = 17;
    many.lens[9] = 0;
    RunBatch(many, rng);
    many.options.window_left = 250;
    RunBatch(many, rng);
  }
}

}  // namespace
}  // namespace flashjit::test
