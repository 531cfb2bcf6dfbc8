// Tail pieces of one-wave batch plans (ops::CutDecodeTail, FLASHJIT_DECODE_TAIL, session 22):
// items longer than a share of a slot keep part of their keys and give the rest as pieces merged
// with them. Forced here on small batches (a share of one tile and up, so that pieces of one tile
// and pieces ending on a partial tile occur) and checked against the fp64 reference: ragged
// lengths with 0, 1 and page boundaries, page sizes 1 / 16 / 64, GQA 4 / 5 / 8, head dims 64 /
// 128 / 256, f16 and bf16 q, bf16 and e4m3 caches, NHD and HND, a window, soft cap, sinks,
// ALiBi, in-kernel RoPE, logits far below zero, and the persistent grid. Each case's plan is
// checked to hold more items than the same plan without pieces.
#include <vector>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_spec.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

// Wrappers created in this scope cut tails of `percent` with pieces of `piece` tiles (0: auto)
// wherever a slot's share is at least one tile; the persistent grid as `persistent` asks.
struct ForceTail {
  ForceTail(int percent, int piece, int persistent) {
    ops::SetDecodeTailForTesting(percent, piece, 1);
    ops::SetDecodePersistentForTesting(persistent, 0);
  }
  ~ForceTail() {
    ops::SetDecodeTailForTesting(-1, 0);
    ops::SetDecodePersistentForTesting(-1, 0);
  }
};

int PlannedItems(const BatchCase& c, std::mt19937& rng) {
  PagedCache pc = BuildCache(c, rng);
  PlannedCase planned = PlanCase(c, pc, c.options);
  return DownloadPlanHeader(planned.ws).work;
}

// Runs the case with tail pieces (percent, piece) against the reference, after checking that its
// plan holds more items than without them.
void RunTail(const BatchCase& c, int percent, int piece, std::mt19937& rng,
             int persistent = ops::kPersistentNever) {
  INFO(Describe(c) << ", tail " << percent << " % pieces " << piece);
  int plain = 0;
  if (!DryRun()) {
    ForceTail off(0, 0, persistent);
    plain = PlannedItems(c, rng);
  }
  ForceTail force(percent, piece, persistent);
  if (!DryRun()) {
    const int cut = PlannedItems(c, rng);
    CHECK(cut > plain);
  }
  RunBatch(c, rng);
}

TEST_CASE("batch decode: tail pieces", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  for (int ps : {1, 16, 64}) {
    BatchCase c;  // group 4, sinks, the LSE
    c.page_size = ps;
    c.sinks = true;
    c.lens = MixedLengths(ps == 1 ? 7 : 12, ps == 1 ? 3000 : 9000, ps, rng);
    RunTail(c, 10, 0, rng);
    RunTail(c, 25, 1, rng);
  }
  {
    BatchCase c;  // group 5, D 64, a window, soft cap, f16
    c.q_dtype = DType::kF16;
    c.kv_dtype = DType::kF16;
    c.num_qo_heads = 10;
    c.head_dim = 64;
    c.options.window_left = 700;
    c.options.logits_soft_cap = 30.f;
    c.lens = MixedLengths(9, 6000, 16, rng);
    RunTail(c, 10, 2, rng);
  }
  {
    BatchCase c;  // e4m3 cache with scales, page 64, logits far below zero
    c.kv_dtype = DType::kF8E4M3;
    c.page_size = 64;
    c.huge_negative = true;
    c.options.k_scale = 0.5f;
    c.options.v_scale = 2.f;
    c.lens = MixedLengths(10, 8000, 64, rng);
    RunTail(c, 10, 0, rng);
  }
  {
    BatchCase c;  // group 8, D 256, HND, ALiBi
    c.num_qo_heads = 16;
    c.head_dim = 256;
    c.layout = KVLayout::kHND;
    c.options.alibi = true;
    c.lens = MixedLengths(6, 5000, 16, rng);
    RunTail(c, 15, 0, rng);
  }
  {
    BatchCase c;  // in-kernel RoPE, separate K and V tensors
    c.combined = false;
    c.options.rope = true;
    c.options.rope_theta = 5e5f;
    c.lens = MixedLengths(8, 7000, 16, rng);
    RunTail(c, 10, 0, rng);
  }
  {
    BatchCase c;  // one long request, pieces of one tile; and the persistent grid
    c.lens = {20000};
    RunTail(c, 20, 1, rng);
    c.lens = MixedLengths(10, 4000, 16, rng);
    RunTail(c, 10, 0, rng, ops::kPersistentAlways);
  }
}

// A small case for the sanitizers.
TEST_CASE("batch decode: tail pieces small", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  BatchCase c;
  c.sinks = true;
  c.lens = {2000, 0, 1, 65, 1100};
  RunTail(c, 20, 1, rng);
}

}  // namespace
}  // namespace flashjit::test
