// Split requests merged by their last CTA (a warp per query head) and by the merge kernel (a CTA
// per query head and 32 columns, 4 warps splitting the partials, launched with PDL; session 15).
// Chunks are forced small so that requests split into tens to hundreds of partials: rows of 1 / 2 /
// 8 / 16 query heads, head dims 64 / 128 / 256, a 16-bit and an fp8 cache, page sizes 1 and 16,
// sinks, the LSE, empty and one-key requests. Each case runs under both merge forms; its plan is
// checked to hold the expected work items and merges, then run against the fp64 reference.
#include <cstdint>
#include <vector>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

// Plans made in this scope take chunks of `keys`, the merge form `merge` and no persistent grid.
struct ForcePlan {
  ForcePlan(int64_t keys, ops::DecodeMergeMode merge) {
    ops::SetDecodeChunkForTesting(keys);
    ops::SetDecodeMergeForTesting(merge);
    ops::SetDecodePersistentForTesting(ops::kPersistentNever, 0);
  }
  ~ForcePlan() {
    ops::SetDecodeChunkForTesting(0);
    ops::SetDecodeMergeForTesting(-1);
    ops::SetDecodePersistentForTesting(-1, 0);
  }
};

void RunSplitAs(const BatchCase& c, int64_t chunk, ops::DecodeMergeMode merge, int items,
                int merges, std::mt19937& rng) {
  ForcePlan force(chunk, merge);
  if (!DryRun()) {
    PagedCache pc = BuildCache(c, rng);
    PlannedCase planned = PlanCase(c, pc, c.options);
    const PlanHeader h = DownloadPlanHeader(planned.ws);
    INFO(Describe(c) << ", chunk " << chunk << ", merge form " << merge);
    CHECK(h.work == items);
    CHECK(h.merge == merges);
    CHECK(h.persistent_ctas == 0);
    CHECK(h.kernel_merge == (merge == ops::kMergeKernel ? merges : 0));
  }
  RunBatch(c, rng);
}

// Under each merge form: checks that the case's plan splits into `items` work items with
// `merges` merges, then runs it against the reference.
void RunSplit(const BatchCase& c, int64_t chunk, int items, int merges, std::mt19937& rng) {
  for (const ops::DecodeMergeMode merge : {ops::kMergeFused, ops::kMergeKernel})
    RunSplitAs(c, chunk, merge, items, merges, rng);
}

TEST_CASE("batch decode: split requests merged over many partials", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  {
    BatchCase c;  // one kv head, 8 query heads (Llama-70B over 8 GPUs): 32 partials of 8 rows
    c.num_qo_heads = 8;
    c.num_kv_heads = 1;
    c.lens = {16384};
    RunSplit(c, 512, 32, 1, rng);
  }
  {
    BatchCase c;  // 16 rows, sinks, 256 + 141 partials, an empty and a one-key request
    c.num_qo_heads = 32;
    c.num_kv_heads = 2;
    c.sinks = true;
    c.lens = {16384, 9000, 1, 0};
    RunSplit(c, 64, 256 + 141 + 1 + 1, 2, rng);
  }
  {
    BatchCase c;  // fp8 (e4m3) KV, group 4, a request one key past a chunk
    c.kv_dtype = DType::kF8E4M3;
    c.num_qo_heads = 16;
    c.num_kv_heads = 4;
    c.lens = {8000, 129, 64};
    RunSplit(c, 128, 63 + 2 + 1, 2, rng);
  }
  {
    BatchCase c;  // D 256, soft cap, group 2: 79 partials of 2 rows
    c.head_dim = 256;
    c.num_qo_heads = 4;
    c.num_kv_heads = 2;
    c.options.logits_soft_cap = 30.f;
    c.lens = {5000};
    RunSplit(c, 64, 79, 1, rng);
  }
  {
    BatchCase c;  // D 64, 16 rows, page size 1: 313 partials
    c.head_dim = 64;
    c.num_qo_heads = 16;
    c.num_kv_heads = 1;
    c.page_size = 1;
    c.sinks = true;
    c.lens = {20000};
    RunSplit(c, 64, 313, 1, rng);
  }
  {
    BatchCase c;  // D 64, 16 rows, 704 + 5 partials, logits far below zero
    c.head_dim = 64;
    c.num_qo_heads = 16;
    c.num_kv_heads = 1;
    c.huge_negative = true;
    c.lens = {45000, 300};
    RunSplit(c, 64, 704 + 5, 2, rng);
  }
}

// A small case for the sanitizers: sinks, a request of one key, many partials at D 64.
TEST_CASE("batch decode: split requests merged small", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  {
    BatchCase c;  // 8 rows, 47 + 1 + 2 partials
    c.num_qo_heads = 8;
    c.num_kv_heads = 1;
    c.sinks = true;
    c.lens = {3000, 1, 65};
    RunSplit(c, 64, 47 + 1 + 2, 2, rng);
  }
  {
    BatchCase c;  // D 64, 16 rows, 641 partials
    c.head_dim = 64;
    c.num_qo_heads = 16;
    c.num_kv_heads = 1;
    c.lens = {41000};
    RunSplit(c, 64, 641, 1, rng);
  }
}

}  // namespace
}  // namespace flashjit::test
