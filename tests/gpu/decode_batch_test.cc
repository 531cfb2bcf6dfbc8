// BatchDecode (plan/run over a paged KV cache) on the GPU against the fp64 reference: mixed
// lengths, page sizes 1/16/64 at page boundaries, random page order, GQA ratios, layouts,
// knobs, fp8, and splits merged by a thread-block cluster. The persistent grid and CUDA graph
// replay: decode_persistent_test.cc.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/copy.h"
#include "src/runtime/driver.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

TEST_CASE("batch decode: mixed lengths, page sizes, GQA ratios, layouts", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  for (int ps : {1, 16, 64})
    for (auto [hq, hkv] : {std::pair{4, 4}, {16, 4}, {10, 2}, {16, 2}}) {
      BatchCase c;
      c.page_size = ps;
      c.num_qo_heads = hq;
      c.num_kv_heads = hkv;
      c.layout = (hq + ps) % 2 ? KVLayout::kHND : KVLayout::kNHD;
      c.combined = hq != 10;
      c.lens = MixedLengths(ps == 1 ? 9 : 24, ps == 16 ? 16384 : 3000, ps, rng);
      RunBatch(c, rng);
    }
  BatchCase big;  // a large batch of short and long requests
  big.num_qo_heads = 4;
  big.num_kv_heads = 1;
  big.lens = MixedLengths(128, 2000, 16, rng);
  RunBatch(big, rng);
  BatchCase one;  // one long request: split over all SMs
  one.num_qo_heads = 32;
  one.num_kv_heads = 8;
  one.lens = {12345};
  RunBatch(one, rng);
  BatchCase empty;  // every request empty
  empty.lens = {0, 0, 0};
  RunBatch(empty, rng);
}

// The loader divides once a tile and steps from a thread's first row to its others (a fixed
// number of pages and tokens, wrapping into the next page): page sizes that neither divide nor
// are multiples of the rows a pass copies (8 at 16-bit D 128, 16 at fp8 D 128 and 16-bit D 64,
// 32 at fp8 D 64, 4 at 16-bit D 256), with lengths at their page boundaries, every cache dtype
// and both layouts.
TEST_CASE("batch decode: page sizes that do not divide a tile", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  const std::vector<std::pair<int, DType>> dims = {{128, DType::kBF16}, {128, DType::kF8E4M3},
                                                   {64, DType::kBF16},  {64, DType::kF8E5M2},
                                                   {256, DType::kF16},  {128, DType::kF8E5M2}};
  const std::vector<int> page_sizes = {3, 5, 12, 24, 48, 80};
  for (size_t k = 0; k < page_sizes.size(); ++k)
    for (size_t j = 0; j < dims.size(); ++j) {
      if ((j + k) % 2) continue;  // half the pairs, the other half at the next page size
      const int ps = page_sizes[k];
      const auto& [d, kv] = dims[j];
      BatchCase c;
      c.page_size = ps;
      c.head_dim = d;
      c.kv_dtype = kv;
      c.q_dtype = kv == DType::kF16 ? DType::kF16 : DType::kBF16;
      c.num_qo_heads = 8;
      c.num_kv_heads = 2;
      c.layout = ps % 2 ? KVLayout::kHND : KVLayout::kNHD;
      c.combined = ps != 24;
      c.lens = MixedLengths(12, 3000, ps, rng);
      RunBatch(c, rng);
    }
}

// fp8 caches are converted in registers (bytes permuted into f16 tensor-core fragments; a bf16
// q enters f16 scaled per row by a power of two) unless RoPE runs in the kernel; every head dim
// and dtype pair, codes that are mostly subnormal (with q scaled up so that the keys still shape
// the softmax), bf16 queries far outside f16's range, and RoPE's shared-memory path.
TEST_CASE("batch decode: fp8 KV, every head dim and dtype pair, subnormal codes", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  struct Fp8Case {
    int d;
    DType q, kv;
  };
  for (const Fp8Case& f :
       {Fp8Case{64, DType::kBF16, DType::kF8E5M2}, Fp8Case{64, DType::kF16, DType::kF8E4M3},
        Fp8Case{128, DType::kBF16, DType::kF8E4M3}, Fp8Case{128, DType::kBF16, DType::kF8E5M2},
        Fp8Case{128, DType::kF16, DType::kF8E4M3}, Fp8Case{128, DType::kF16, DType::kF8E5M2},
        Fp8Case{256, DType::kBF16, DType::kF8E4M3}, Fp8Case{256, DType::kF16, DType::kF8E5M2}}) {
    BatchCase c;
    c.head_dim = f.d;
    c.q_dtype = f.q;
    c.kv_dtype = f.kv;
    c.num_qo_heads = 10;
    c.num_kv_heads = 2;
    c.lens = MixedLengths(10, 3000, 16, rng);
    c.options.k_scale = 1.25f;
    c.options.v_scale = 0.625f;
    RunBatch(c, rng);
  }
  for (DType kv : {DType::kF8E4M3, DType::kF8E5M2}) {
    // Below 2^-6 (e4m3) and 2^-14 (e5m2) fp8 codes are subnormal.
    BatchCase c;
    c.kv_dtype = kv;
    c.kv_std = kv == DType::kF8E4M3 ? 4e-3f : 3e-5f;
    c.q_std = 1.f / c.kv_std;
    c.lens = MixedLengths(8, 2000, 16, rng);
    RunBatch(c, rng);
  }
  for (DType kv : {DType::kF8E4M3, DType::kF8E5M2}) {
    // bf16 queries beyond f16's range (65504) and below its subnormals (2^-24), heads of
    // different magnitude sharing a CTA, an all-zero head, a bf16-subnormal head; sm_scale
    // brings the large (then the tiny) heads' logits to O(1) so that the keys shape them.
    for (const auto& [scales, sm_scale] :
         {std::pair{std::vector<float>{1e5f, 3e5f, 0.f, 2e4f, 1.f}, 1e-5f},
          std::pair{std::vector<float>{1e-20f, 5e-21f, 0.f, 1e-30f, 4e-39f}, 1e20f}}) {
      for (int d : {64, 128, 256}) {
        BatchCase c;
        c.kv_dtype = kv;
        c.head_dim = d;
        c.num_qo_heads = 10;
        c.num_kv_heads = 2;
        c.q_head_scale = scales;
        c.options.sm_scale = sm_scale / std::sqrt(float(d));
        c.lens = MixedLengths(6, 1500, 16, rng);
        RunBatch(c, rng);
      }
    }
  }
  {
    // Logits near -524288 through the scaled bf16 query (e5m2 holds the keys' -512 exactly):
    // the softmax's maximum and the LSE in the scaled units, unscaled after the last step.
    BatchCase c;
    c.kv_dtype = DType::kF8E5M2;
    c.huge_negative = true;
    c.lens = MixedLengths(6, 1500, 16, rng);
    RunBatch(c, rng);
  }
  {
    BatchCase c;  // RoPE: converted to 16 bits in shared memory, then rotated
    c.kv_dtype = DType::kF8E4M3;
    c.options.rope = true;
    c.lens = MixedLengths(8, 2000, 16, rng);
    RunBatch(c, rng);
  }
  {
    BatchCase c;  // knobs on the register path
    c.q_dtype = DType::kF16;
    c.kv_dtype = DType::kF8E5M2;
    c.options.logits_soft_cap = 5.f;
    c.options.sm_scale = 0.5f;
    c.options.window_left = 300;
    c.sinks = true;
    c.lens = MixedLengths(8, 2000, 16, rng);
    RunBatch(c, rng);
  }
}

// In-kernel RoPE at every head dim and KV dtype: a lane rotates D/64 dims of each of its warp's
// rows, so each head dim maps the lanes differently; fp8 keys are converted and rotated in one
// pass and their values take the register path. Positions up to 16k (the angles start exact at
// a warp's first key and step a row) and page boundaries, scaled and unscaled positions, two
// thetas.
TEST_CASE("batch decode: RoPE at every head dim and KV dtype", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  const std::pair<DType, DType> kDTypes[] = {{DType::kBF16, DType::kBF16},
                                             {DType::kF16, DType::kF16},
                                             {DType::kBF16, DType::kF8E4M3},
                                             {DType::kF16, DType::kF8E5M2}};
  for (int d : {64, 128, 256}) {
    for (auto [qt, kvt] : kDTypes) {
      BatchCase c;
      c.q_dtype = qt;
      c.kv_dtype = kvt;
      c.head_dim = d;
      c.num_qo_heads = 8;
      c.num_kv_heads = 2;
      c.lens = {16384, 1, 15, 16, 17, 3001};
      c.options.rope = true;
      c.options.rope_scale = d == 128 ? 1.f : 4.f;
      c.options.rope_theta = d == 256 ? 1e6f : 1e4f;
      if (DTypeBytes(kvt) == 1) {
        c.options.k_scale = 0.5f;
        c.options.v_scale = 1.5f;
      }
      RunBatch(c, rng);
    }
  }
}

TEST_CASE("batch decode: dtypes, head dims, knobs", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  auto base = [&] {
    BatchCase c;
    c.lens = MixedLengths(12, 2500, 16, rng);
    return c;
  };
  for (int d : {64, 256}) {
    BatchCase c = base();
    c.head_dim = d;
    RunBatch(c, rng);
  }
  {
    BatchCase c = base();
    c.q_dtype = c.kv_dtype = DType::kF16;
    c.layout = KVLayout::kHND;
    RunBatch(c, rng);
  }
  for (DType kv : {DType::kF8E4M3, DType::kF8E5M2}) {
    BatchCase c = base();
    c.q_dtype = kv == DType::kF8E4M3 ? DType::kBF16 : DType::kF16;
    c.kv_dtype = kv;
    c.options.k_scale = 0.75f;
    c.options.v_scale = 1.5f;
    RunBatch(c, rng);
  }
  {
    BatchCase c = base();
    c.options.logits_soft_cap = 5.f;
    c.options.sm_scale = 0.5f;
    RunBatch(c, rng);
  }
  {
    BatchCase c = base();
    c.options.alibi = true;
    RunBatch(c, rng);
  }
  for (int window : {0, 40, 1000}) {
    BatchCase c = base();
    c.options.window_left = window;
    RunBatch(c, rng);
  }
  {
    BatchCase c = base();
    c.sinks = true;
    RunBatch(c, rng);
  }
  {
    BatchCase c = base();
    c.q_dtype = c.kv_dtype = DType::kF16;
    c.options.rope = true;
    RunBatch(c, rng);
  }
  {
    // bf16 RoPE with rows of one to a few keys, whose LSE carries the rounding of the rotated q
    // and k undiluted (LseTolerance; session 21 saw 0.003 on lse 1.38 at 32/8 heads).
    BatchCase c;
    c.num_qo_heads = 32;
    c.num_kv_heads = 8;
    c.lens = {1000, 64, 3, 1, 2};
    c.options.rope = true;
    RunBatch(c, rng);
  }
  {
    BatchCase c = base();
    c.huge_negative = true;
    c.with_lse = false;
    RunBatch(c, rng);
  }
}

// Batches whose requests all split into the same number of chunks (2..8) are merged by a
// thread-block cluster through distributed shared memory (sm_90+, 16-bit KV at head_dim 128):
// one request of 1k keys (8 chunks), three of about 1k, 16 of 1k (2 chunks), a window, sinks, LSE,
// the knobs, f16, RoPE, group sizes 5 and 17 (two query tiles), HND, raw logits near -500000.
TEST_CASE("batch decode: uniform splits merged by a thread-block cluster", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  std::vector<BatchCase> cases;
  auto add = [&](std::vector<int> lens) { return AddCase(cases, 32, 8, std::move(lens)); };
  add({1024});
  add({1024, 1000, 990});
  add(std::vector<int>(16, 1024));  // the benchmark's B=16 L=1k: two chunks each
  add({1000})->sinks = true;
  add({2000})->options.window_left = 900;
  add({777})->with_lse = false;
  {
    BatchCase* c = add({1500, 1480});
    c->q_dtype = c->kv_dtype = DType::kF16;
    c->layout = KVLayout::kHND;
    c->combined = false;
    c->options.logits_soft_cap = 5.f;
    c->options.sm_scale = 0.5f;
  }
  add({1100})->options.alibi = true;
  {
    BatchCase* c = add({1024});
    c->q_dtype = c->kv_dtype = DType::kF16;
    c->options.rope = true;
  }
  {
    BatchCase* c = add({1024, 1024});
    c->num_qo_heads = 10;  // group 5
    c->num_kv_heads = 2;
    c->sinks = true;
  }
  {
    BatchCase* c = add({1024});
    c->num_qo_heads = 34;  // group 17: two query tiles per kv head
    c->num_kv_heads = 2;
  }
  {
    BatchCase* c = add({1024});
    c->huge_negative = true;
    c->with_lse = false;
  }
  for (BatchCase c : cases) {
    // The plan BatchDecode makes on the H200 (132 SMs) merges this batch in a cluster
    // (ops::DecodeMaxCluster: 8 for 16-bit KV at head_dim 128).
    REQUIRE(DTypeBytes(c.kv_dtype) == 2);
    REQUIRE(c.head_dim == 128);
    ops::DecodeScheduleLimits limits;
    const int q_tiles = (c.num_qo_heads / c.num_kv_heads + 15) / 16;
    limits.ctas_per_item = c.num_kv_heads * q_tiles;
    limits.sms = 132;
    limits.slots = 132 * ops::DecodeCtasPerSm(c.head_dim, DTypeBytes(c.kv_dtype));
    limits.lone_tile_cost = 0.55;
    limits.max_items = ops::DecodeMaxItems(static_cast<int>(c.lens.size()), limits);
    limits.max_cluster = 8;
    std::vector<ops::DecodeRequest> reqs;
    for (int len : c.lens)
      reqs.push_back(
          {0, len,
           ops::DecodeFirstKey(len, c.options.window_left, ops::DecodeFixedPage(c.page_size))});
    const int cluster = ops::BuildDecodeSchedule(reqs, limits).cluster;
    INFO(Describe(c) << ": cluster " << cluster);
    CHECK(cluster > 1);
    RunBatch(c, rng);
  }
}

// The cluster that BatchDecode's plan takes for `c` on the H200 (132 SMs, 2 CTAs per SM at
// 16-bit D 128) when clusters merge up to `max_cluster` chunks.
int PlannedCluster(const BatchCase& c, int max_cluster) {
  ops::DecodeScheduleLimits limits;
  const int q_tiles = (c.num_qo_heads / c.num_kv_heads + 15) / 16;
  limits.ctas_per_item = c.num_kv_heads * q_tiles;
  limits.sms = 132;
  limits.slots = 132 * ops::DecodeCtasPerSm(c.head_dim, DTypeBytes(c.kv_dtype));
  limits.lone_tile_cost = 0.55;
  limits.max_items = ops::DecodeMaxItems(static_cast<int>(c.lens.size()), limits);
  limits.max_cluster = max_cluster;
  std::vector<ops::DecodeRequest> reqs;
  for (int len : c.lens)
    reqs.push_back(
        {0, len,
         ops::DecodeFirstKey(len, c.options.window_left, ops::DecodeFixedPage(c.page_size))});
  return ops::BuildDecodeSchedule(reqs, limits).cluster;
}

// Wrappers created in this scope merge up to `n` chunks per cluster (FLASHJIT_DECODE_MAX_CLUSTER).
struct ForceMaxCluster {
  explicit ForceMaxCluster(int n) { ops::SetDecodeMaxClusterForTesting(n); }
  ~ForceMaxCluster() { ops::SetDecodeMaxClusterForTesting(0); }
};

// Clusters of 9..16 CTAs (non-portable sizes on sm_90; session 9's FLASHJIT_DECODE_MAX_CLUSTER=16):
// the merge reads the chunks in two batches of 8 and rescales between them. Uniform batches
// whose plan takes a cluster over 8 (the benchmark's B=1 L=1k: 16 chunks of 64 keys; L=4k,
// chunks of 256; L=16384 on 64-key pages), page sizes 1/16/64, a window, sinks, f16 with RoPE,
// ALiBi, soft cap, HND, two query tiles, logits near -500000; then ragged batches (lengths
// 0..16384, page sizes 1/16/64) under the same limit, which split and merge by their last CTA.
TEST_CASE("batch decode: clusters of up to 16 CTAs (non-portable) and ragged batches",
          "[gpu][decode]") {
  std::mt19937 rng(Seed());
  ForceMaxCluster force(16);
  std::vector<BatchCase> cases;
  auto add = [&](std::vector<int> lens) { return AddCase(cases, 32, 8, std::move(lens)); };
  add({1024});
  {
    BatchCase* c = add({1024, 1000, 970});
    c->num_qo_heads = 8;  // 2 kv heads: 96 CTAs (at 8 heads the plan takes clusters of 8)
    c->num_kv_heads = 2;
  }
  add({4096});
  add({16384})->page_size = 64;
  {
    BatchCase* c = add({1024, 1020});
    c->num_qo_heads = 4;
    c->num_kv_heads = 1;
    c->page_size = 1;
  }
  {
    BatchCase* c = add({3000});
    c->options.window_left = 1000;
    c->sinks = true;
  }
  {
    BatchCase* c = add({1024});
    c->q_dtype = c->kv_dtype = DType::kF16;
    c->options.rope = true;
  }
  add({1100})->options.alibi = true;
  {
    BatchCase* c = add({4000, 3990});
    c->layout = KVLayout::kHND;
    c->combined = false;
    c->options.logits_soft_cap = 5.f;
    c->options.sm_scale = 0.5f;
  }
  {
    BatchCase* c = add({1024});
    c->num_qo_heads = 34;  // group 17: two query tiles per kv head
    c->num_kv_heads = 2;
  }
  {
    BatchCase* c = add({1024});
    c->huge_negative = true;
    c->with_lse = false;
  }
  for (BatchCase c : cases) {
    const int cluster = PlannedCluster(c, 16);
    INFO(Describe(c) << ": cluster " << cluster);
    CHECK(cluster > 8);
    RunBatch(c, rng);
  }
  for (int ps : {1, 16, 64}) {
    BatchCase c;
    c.page_size = ps;
    c.num_qo_heads = 32;
    c.num_kv_heads = 8;
    c.lens = MixedLengths(ps == 1 ? 9 : 20, ps == 1 ? 3000 : 16384, ps, rng);
    RunBatch(c, rng);
  }
}

// A small cluster of 16 (one kv head, 16 chunks of 64 keys: 16 CTAs) for compute-sanitizer.
TEST_CASE("batch decode: one cluster of 16 CTAs small", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  ForceMaxCluster force(16);
  BatchCase c;
  c.num_qo_heads = 4;
  c.num_kv_heads = 1;
  c.lens = {1024};
  c.sinks = true;
  REQUIRE(PlannedCluster(c, 16) == 16);
  RunBatch(c, rng);
}

}  // namespace
}  // namespace flashjit::test
