// Batch decode in production configurations (session 13) against the fp64 reference: Gemma-2's
// head_dim 256 with a logits soft cap and a sliding window, one kv head (Llama-70B over 8 GPUs)
// with the plans whose merge the cost model now prices, 32 kv heads in one request (no cluster of 8
// over 256 CTAs), group 7.
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

TEST_CASE("batch decode: production configurations", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  {
    BatchCase c;  // Gemma-2: 16 / 8 heads, D 256, soft cap 50, global and local (window) layers
    c.num_qo_heads = 16;
    c.num_kv_heads = 8;
    c.head_dim = 256;
    c.options.logits_soft_cap = 50.f;
    c.lens = MixedLengths(6, 6000, 16, rng);
    RunBatch(c, rng);
    c.options.window_left = 4095;
    c.lens = {6000, 4097, 4096, 4095, 1, 0};
    RunBatch(c, rng);
  }
  for (auto [b, len] : {std::pair{1, 16384}, {1, 4096}, {64, 1024}}) {
    BatchCase c;  // one kv head, 8 query heads: 2 rows per warp in the merge
    c.num_qo_heads = 8;
    c.num_kv_heads = 1;
    c.lens.assign(b, len);
    RunBatch(c, rng);
  }
  {
    BatchCase c;  // group 1, 32 kv heads, one long request
    c.num_qo_heads = 32;
    c.num_kv_heads = 32;
    c.lens = {16384};
    RunBatch(c, rng);
  }
  {
    BatchCase c;  // group 7 (Qwen-7B), 16 requests
    c.num_qo_heads = 28;
    c.num_kv_heads = 4;
    c.lens.assign(16, 4096);
    c.lens[3] = 4095;
    RunBatch(c, rng);
  }
}

// A small case for the sanitizers: D 256 with the soft cap and a window, one kv head split.
TEST_CASE("batch decode: production configurations small", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  BatchCase c;
  c.num_qo_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 256;
  c.options.logits_soft_cap = 50.f;
  c.options.window_left = 700;
  c.lens = {1500, 17, 0, 900};
  RunBatch(c, rng);
  BatchCase t;
  t.num_qo_heads = 8;
  t.num_kv_heads = 1;
  t.lens = {4096};
  RunBatch(t, rng);
}

}  // namespace
}  // namespace flashjit::test
