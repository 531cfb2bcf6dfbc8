// Tail pieces of one-wave batch plans (ops::CutDecodeTail, FLASHJIT_DECODE_TAIL, session 22):
// items longer than a share of a slot keep part of their keys and give the rest as pieces merged
// with them. Forced here on small batches (shares under a tile and up, so that pieces of one
// tile and pieces ending on a partial tile occur) and checked against the fp64 reference: ragged
// lengths with 0, 1 and page boundaries, page sizes 1 / 16 / 64, GQA 4 / 5 / 8, head dims 64 /
// 128 / 256, f16 and bf16 q, bf16 and e4m3 caches, NHD and HND, a window, soft cap, sinks,
// ALiBi, in-kernel RoPE, logits far below zero, and the persistent grid. Each case's plan is
// checked to hold more items than the same plan without pieces; one runs a plan of two waves.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/copy.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

// Wrappers created in this scope cut tails of `percent` with pieces of `piece` tiles (0: auto)
// whatever a slot's share (a kept part is at least one tile), their plans take chunks of `chunk`
// keys (the chooser would split these small batches into chunks shorter than a share, over several
// waves), and the persistent grid as `persistent` asks.
struct ForceTail {
  ForceTail(int percent, int piece, int64_t chunk, int persistent, int waves = 1) {
    ops::SetDecodeTailForTesting(percent, piece, 0, waves);
    ops::SetDecodeChunkForTesting(chunk);
    ops::SetDecodePersistentForTesting(persistent, 0);
  }
  ~ForceTail() {
    ops::SetDecodeTailForTesting(-1, 0);
    ops::SetDecodeChunkForTesting(0);
    ops::SetDecodePersistentForTesting(-1, 0);
  }
};

// The items of the case's plan on `sms` SMs, made on the host as BatchDecode::Plan makes it (in
// a dry run too, so that the stage catches a case the rule would not cut).
size_t HostPlanItems(const BatchCase& c, int sms) {
  const BatchDecodeConfig cfg = ConfigFor(c, std::max<int>(1, static_cast<int>(c.lens.size())));
  ops::DecodeScheduleLimits l = ops::BatchDecodeLimits(TestEngine(), cfg, sms);
  l.max_items = ops::BatchDecodeMaxItems(cfg, l);
  std::vector<ops::DecodeRequest> req;
  for (int len : c.lens)
    req.push_back(
        {0, len,
         ops::DecodeFirstKey(len, c.options.window_left, ops::DecodeFixedPage(c.page_size))});
  return ops::BuildDecodeSchedule(req, l).work.size();
}

// Runs the case with tail pieces (percent, piece) against the reference, after checking that its
// plan holds more items than without them (on the host), and that the device's plan holds the
// host's.
void RunTail(const BatchCase& c, int percent, int piece, std::mt19937& rng, int64_t chunk = 1 << 16,
             int persistent = ops::kPersistentNever, int waves = 1) {
  INFO(Describe(c) << ", tail " << percent << " % pieces " << piece << ", chunk " << chunk
                   << ", waves " << waves);
  int sms = 132;  // the H200's, for the dry run
  if (!DryRun()) {
    const Result<int> n = runtime::MultiprocessorCount(TestEngine(), 0);
    REQUIRE(n.ok());
    sms = *n;
  }
  size_t plain = 0;
  {
    ForceTail off(0, 0, chunk, persistent, waves);
    plain = HostPlanItems(c, sms);
  }
  ForceTail force(percent, piece, chunk, persistent, waves);
  const size_t cut = HostPlanItems(c, sms);
  REQUIRE(cut > plain);
  if (!DryRun()) {
    PagedCache pc = BuildCache(c, rng);
    PlannedCase planned = PlanCase(c, pc, c.options);
    CHECK(static_cast<size_t>(DownloadPlanHeader(planned.ws).work) == cut);
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
    RunTail(c, 10, 0, rng, 1 << 16, ops::kPersistentAlways);
    RunTail(c, 10, 0, rng, 1024);  // split requests: each chunk gives pieces
  }
  {
    BatchCase c;  // a plan of two waves (150 requests, 300 CTAs on 264 slots)
    c.num_kv_heads = 2;
    c.lens = MixedLengths(150, 1500, 16, rng);
    RunTail(c, 10, 0, rng, 1 << 16, ops::kPersistentNever, 2);
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
