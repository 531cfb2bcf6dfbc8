// The K/V copies with an L2 prefetch size (session 21, variant field `l2_prefetch`,
// FLASHJIT_DECODE_L2_PREFETCH): the same kernels with cp.async's .L2::128B / .L2::256B
// qualifier. A hint must not change a result: each forced size is checked against the fp64
// reference on ragged batches with the page boundaries, empty and one-key requests, page sizes
// 1 / 16 / 64, HND, fp8 KV, head dims 64 / 128 / 256, odd GQA, logits far below zero, a window
// with sinks, in-kernel RoPE, and the persistent grid.
#include <random>
#include <vector>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_spec.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

// Variants chosen in this scope use prefetch size `bytes`.
struct ForcePrefetch {
  explicit ForcePrefetch(int bytes) { ops::SetDecodeL2PrefetchForTesting(bytes); }
  ~ForcePrefetch() { ops::SetDecodeL2PrefetchForTesting(-1); }
};

std::vector<BatchCase> PrefetchCases(std::mt19937& rng) {
  std::vector<BatchCase> cases;
  AddCase(cases, 32, 8, MixedLengths(9, 3000, 16, rng));
  AddCase(cases, 32, 8, {15, 16, 17, 0, 1, 4096})->layout = KVLayout::kHND;
  AddCase(cases, 8, 2, MixedLengths(5, 700, 1, rng))->page_size = 1;
  AddCase(cases, 10, 2, MixedLengths(5, 2000, 64, rng))->page_size = 64;  // group 5
  for (DType kv : {DType::kF8E4M3, DType::kF8E5M2}) {
    BatchCase* c = AddCase(cases, 32, 8, {2047, 1, 0, 129, 5000});
    c->kv_dtype = kv;
  }
  AddCase(cases, 16, 4, {600, 33, 0})->head_dim = 64;
  {
    BatchCase* c = AddCase(cases, 16, 2, {900, 17, 1});
    c->head_dim = 256;
    c->q_dtype = c->kv_dtype = DType::kF16;
  }
  {
    BatchCase* c = AddCase(cases, 16, 2, {1200, 65, 0});
    c->kv_dtype = DType::kF8E4M3;
    c->head_dim = 256;
  }
  AddCase(cases, 34, 2, {3000, 1, 40})->huge_negative = true;  // group 17: two query tiles
  {
    BatchCase* c = AddCase(cases, 32, 8, {2500, 300, 0});
    c->options.window_left = 200;
    c->sinks = true;
  }
  AddCase(cases, 32, 8, {1000, 64, 3})->options.rope = true;
  return cases;
}

TEST_CASE("batch decode: K/V copies with an L2 prefetch size", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  for (int bytes : {128, 256}) {
    ForcePrefetch force(bytes);
    INFO("l2_prefetch " << bytes);
    const ops::DecodeSpec s =
        ops::ChooseDecode(DType::kBF16, DType::kBF16, 128, false, false, false);
    REQUIRE(s.l2_prefetch == bytes);
    for (const BatchCase& c : PrefetchCases(rng)) RunBatch(c, rng);
  }
}

TEST_CASE("batch decode: persistent grid with an L2 prefetch size", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  ForcePrefetch force(256);
  struct ForcePersistent {
    ForcePersistent() { ops::SetDecodePersistentForTesting(ops::kPersistentAlways, 3); }
    ~ForcePersistent() { ops::SetDecodePersistentForTesting(-1, 0); }
  } persistent;
  std::vector<BatchCase> cases;
  AddCase(cases, 8, 2, {1500, 0, 1, 17, 64, 65, 200});
  AddCase(cases, 8, 2, {400, 64, 3})->head_dim = 64;
  for (BatchCase c : cases) {
    c.expect_persistent = 3;
    RunBatch(c, rng);
  }
}

}  // namespace
}  // namespace flashjit::test
