// BatchDecode (plan/run over a paged KV cache) on the GPU against the fp64 reference: mixed
// lengths, page sizes 1/16/64 at page boundaries, random page order, GQA ratios, layouts,
// knobs, fp8, and CUDA graph replay across plans.
#include <algorithm>
#include <numeric>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/copy.h"
#include "src/runtime/driver.h"
#include "tests/gpu/decode_test_util.h"

namespace flashjit::test {
namespace {

struct BatchCase {
  DType q_dtype = DType::kBF16, kv_dtype = DType::kBF16;
  int num_qo_heads = 8, num_kv_heads = 2, head_dim = 128, page_size = 16;
  KVLayout layout = KVLayout::kNHD;
  std::vector<int> lens;
  bool sinks = false, with_lse = true, combined = true, huge_negative = false;
  float q_std = 1.f, kv_std = 1.f;  // standard deviations of the random q and K/V values
  DecodeOptions options;
  // Checked after Plan from the workspace header: -1 no check; 0 the plan is not persistent;
  // n > 0 the plan is persistent with min(n, units) CTAs (units: work items x head tiles).
  int expect_persistent = -1;
};

// A paged cache with every request's pages in random order, its host copy (as the device
// holds it) and the page table.
struct PagedCache {
  int64_t num_pages = 0;
  DeviceBuffer k, v, indices;
  std::vector<double> host_k, host_v;  // [num_pages, page_size, Hkv, D] (NHD order)
  std::vector<int32_t> indptr, last_len, page_ids;
};

PagedCache BuildCache(const BatchCase& c, std::mt19937& rng) {
  PagedCache pc;
  const int ps = c.page_size, hkv = c.num_kv_heads, d = c.head_dim;
  const int b = static_cast<int>(c.lens.size());
  pc.indptr.assign(1, 0);
  for (int len : c.lens) {
    const int pages = (len + ps - 1) / ps;
    pc.indptr.push_back(pc.indptr.back() + pages);
    pc.last_len.push_back(pages == 0 ? 0 : len - (pages - 1) * ps);
  }
  pc.num_pages = pc.indptr[b] + 3;  // a few pages nobody uses
  pc.page_ids.resize(pc.num_pages);
  std::iota(pc.page_ids.begin(), pc.page_ids.end(), 0);
  std::shuffle(pc.page_ids.begin(), pc.page_ids.end(), rng);
  pc.page_ids.resize(pc.indptr[b]);
  const int64_t page_elems = int64_t(ps) * hkv * d, n = pc.num_pages * page_elems;
  // Values in NHD order; the device copy is permuted for HND and interleaved for `combined`.
  std::vector<float> k = RandomNormal(n, rng, c.huge_negative ? 0.2f : c.kv_std),
                     v = RandomNormal(n, rng, c.kv_std);
  if (c.huge_negative)
    for (int64_t i = 0; i < n / d; ++i) k[i * d] = -512.f;
  auto index = [&](int64_t page, int t, int h, int i) -> int64_t {  // device element offset
    const int64_t in_page =
        c.layout == KVLayout::kNHD ? (int64_t(t) * hkv + h) * d + i : (int64_t(h) * ps + t) * d + i;
    return c.combined ? page * 2 * page_elems + in_page : page * page_elems + in_page;
  };
  const int64_t dev_elems = c.combined ? 2 * n : n;
  std::vector<float> dk(dev_elems, 0.f), dv(dev_elems, 0.f);
  for (int64_t p = 0; p < pc.num_pages; ++p)
    for (int t = 0; t < ps; ++t)
      for (int h = 0; h < hkv; ++h)
        for (int i = 0; i < d; ++i) {
          const int64_t src = ((p * ps + t) * hkv + h) * d + i, dst = index(p, t, h, i);
          dk[dst] = k[src];
          if (c.combined)
            dk[dst + page_elems] = v[src];
          else
            dv[dst] = v[src];
        }
  std::vector<double> rk, rv;
  pc.k = UploadAs(c.kv_dtype, dk, &rk);
  if (!c.combined) pc.v = UploadAs(c.kv_dtype, dv, &rv);
  pc.host_k.resize(n);
  pc.host_v.resize(n);
  for (int64_t p = 0; p < pc.num_pages; ++p)
    for (int t = 0; t < ps; ++t)
      for (int h = 0; h < hkv; ++h)
        for (int i = 0; i < d; ++i) {
          const int64_t dst = ((p * ps + t) * hkv + h) * d + i, src = index(p, t, h, i);
          pc.host_k[dst] = rk[src];
          pc.host_v[dst] = c.combined ? rk[src + page_elems] : rv[src];
        }
  pc.indices = DeviceBuffer(std::max<size_t>(4, pc.page_ids.size() * 4));
  if (!pc.page_ids.empty()) pc.indices.Upload(pc.page_ids.data(), pc.page_ids.size() * 4);
  return pc;
}

void CacheViews(const BatchCase& c, const PagedCache& pc, TensorView* k, TensorView* v) {
  const int64_t ps = c.page_size, hkv = c.num_kv_heads, d = c.head_dim;
  const bool nhd = c.layout == KVLayout::kNHD;
  if (c.combined) {
    TensorView all = TensorView::Contiguous(pc.k.data(), c.kv_dtype,
                                            {pc.num_pages, 2, nhd ? ps : hkv, nhd ? hkv : ps, d});
    REQUIRE(SplitKVCache(all, k, v).ok());
  } else {
    *k = TensorView::Contiguous(pc.k.data(), c.kv_dtype,
                                {pc.num_pages, nhd ? ps : hkv, nhd ? hkv : ps, d});
    *v = TensorView::Contiguous(pc.v.data(), c.kv_dtype,
                                {pc.num_pages, nhd ? ps : hkv, nhd ? hkv : ps, d});
  }
}

// The reference output [B, Hq, D] and lse [B, Hq] of a batch.
void Reference(const BatchCase& c, const PagedCache& pc, const std::vector<double>& q,
               const std::vector<double>* sinks, const DecodeOptions& opts,
               std::vector<double>* out, std::vector<double>* lse) {
  const int hq = c.num_qo_heads, hkv = c.num_kv_heads, d = c.head_dim, ps = c.page_size;
  const int b = static_cast<int>(c.lens.size());
  out->assign(int64_t(b) * hq * d, 0);
  lse->assign(int64_t(b) * hq, 0);
  ref::DecodeRefOptions ro;
  ro.sm_scale = opts.sm_scale;
  ro.soft_cap = opts.logits_soft_cap;
  ro.window_left = opts.window_left;
  ro.alibi = opts.alibi;
  ro.rope = opts.rope;
  ro.rope_scale = opts.rope_scale;
  ro.rope_theta = opts.rope_theta;
  ro.k_scale = opts.k_scale;
  ro.v_scale = opts.v_scale;
  ro.sinks = sinks;
  for (int r = 0; r < b; ++r) {
    const int len = c.lens[r];
    std::vector<double> k(int64_t(len) * hkv * d), v(k.size());
    for (int j = 0; j < len; ++j) {
      const int64_t page = pc.page_ids[pc.indptr[r] + j / ps];
      const int64_t src = (page * ps + j % ps) * hkv * d;
      std::copy_n(pc.host_k.begin() + src, hkv * d, k.begin() + int64_t(j) * hkv * d);
      std::copy_n(pc.host_v.begin() + src, hkv * d, v.begin() + int64_t(j) * hkv * d);
    }
    ref::DecodeAttention(q.data() + int64_t(r) * hq * d, k.data(), v.data(), len, hq, hkv, d, ro,
                         out->data() + int64_t(r) * hq * d, lse->data() + int64_t(r) * hq);
  }
}

std::string Describe(const BatchCase& c) {
  int mx = 0;
  for (int l : c.lens) mx = std::max(mx, l);
  return fmt::format(
      "batch {}/{} Hq {} Hkv {} D {} page {} {} B {} max_len {} combined {} cap {} alibi {} rope "
      "{} window {} sinks {} huge {} q_std {} kv_std {}",
      DTypeName(c.q_dtype), DTypeName(c.kv_dtype), c.num_qo_heads, c.num_kv_heads, c.head_dim,
      c.page_size, c.layout == KVLayout::kNHD ? "NHD" : "HND", c.lens.size(), mx, c.combined,
      c.options.logits_soft_cap, c.options.alibi, c.options.rope, c.options.window_left, c.sinks,
      c.huge_negative, c.q_std, c.kv_std);
}

void RunBatch(BatchCase c, std::mt19937& rng) {
  const int hq = c.num_qo_heads, d = c.head_dim, b = static_cast<int>(c.lens.size());
  PagedCache pc = BuildCache(c, rng);
  std::vector<float> q = RandomNormal(int64_t(b) * hq * d, rng, c.q_std);
  if (c.huge_negative) {
    for (int64_t i = 0; i < int64_t(b) * hq; ++i) q[i * d] = 1024.f;
    c.options.sm_scale = 1.f;
  }
  std::vector<double> qd, sinks_d;
  DeviceBuffer dq = Upload16(c.q_dtype, q, &qd);
  DeviceBuffer dout(std::max<int64_t>(1, int64_t(b) * hq * d) * 2), dlse(std::max(1, b * hq) * 4),
      dsinks(hq * 4);
  dout.Fill(0xFF);
  dlse.Fill(0xFF);
  if (c.sinks) {
    std::vector<float> s = RandomNormal(hq, rng, 2.f);
    dsinks.Upload(s.data(), hq * 4);
    sinks_d.assign(s.begin(), s.end());
    c.options.sinks = TensorView::Contiguous(dsinks.data(), DType::kF32, {hq});
  }
  BatchDecodeConfig cfg;
  cfg.num_qo_heads = hq;
  cfg.num_kv_heads = c.num_kv_heads;
  cfg.head_dim = d;
  cfg.page_size = c.page_size;
  cfg.q_dtype = c.q_dtype;
  cfg.kv_dtype = c.kv_dtype;
  cfg.layout = c.layout;
  cfg.max_batch_size = std::max(b, 1);
  auto wrapper = BatchDecode::Create(TestEngine(), cfg);
  REQUIRE(wrapper.ok());
  DeviceBuffer ws((*wrapper)->WorkspaceBytes());
  const std::string what = Describe(c);
  Status s = (*wrapper)->Plan(pc.indptr.data(), pc.last_len.data(), b, c.options, ws.data(),
                              ws.bytes(), nullptr, pc.page_ids.data(), pc.num_pages);
  INFO(what << ": plan " << s.ToString());
  REQUIRE(s.ok());
  if (c.expect_persistent >= 0 && !DryRun()) {
    Synchronize();
    int32_t header[4];  // num_work, num_merge, persistent CTAs, 0
    ws.Download(header, sizeof(header));
    const int64_t units = int64_t(header[0]) * c.num_kv_heads * ((hq / c.num_kv_heads + 15) / 16);
    const int64_t expect =
        c.expect_persistent == 0 ? 0 : std::min<int64_t>(c.expect_persistent, units);
    INFO(what << ": work items " << header[0] << ", merges " << header[1] << ", persistent CTAs "
              << header[2]);
    CHECK(header[2] == expect);
  }
  TensorView tk, tv;
  CacheViews(c, pc, &tk, &tv);
  TensorView tlse =
      c.with_lse ? TensorView::Contiguous(dlse.data(), DType::kF32, {b, hq}) : TensorView{};
  s = (*wrapper)->Run(TensorView::Contiguous(dq.data(), c.q_dtype, {b, hq, d}), tk, tv,
                      TensorView::Contiguous(pc.indices.data(), DType::kI32,
                                             {static_cast<int64_t>(pc.page_ids.size())}),
                      TensorView::Contiguous(dout.data(), c.q_dtype, {b, hq, d}), tlse);
  INFO(what << ": run " << s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<double> ref_out, ref_lse;
  Reference(c, pc, qd, c.sinks ? &sinks_d : nullptr, c.options, &ref_out, &ref_lse);
  std::vector<float> out = Download16(c.q_dtype, dout, int64_t(b) * hq * d);
  std::vector<float> lse = DownloadF32(dlse, int64_t(b) * hq);
  double tol = OutTolerance(c.q_dtype, DTypeBytes(c.kv_dtype) == 1, c.options.rope);
  if (c.huge_negative) tol = 0.08;
  CheckDecode(out, ref_out, c.with_lse ? &lse : nullptr, ref_lse, tol, what);
}

std::vector<int> MixedLengths(int b, int max_len, int page_size, std::mt19937& rng) {
  std::vector<int> lens = {0, 1, page_size - 1, page_size, page_size + 1, max_len};
  std::uniform_int_distribution<int> dist(1, max_len);
  while (static_cast<int>(lens.size()) < b)
    lens.push_back(dist(rng) / (lens.size() % 3 ? 8 : 1) + 1);
  lens.resize(b);
  std::shuffle(lens.begin(), lens.end(), rng);
  for (int& l : lens) l = std::max(0, l);
  return lens;
}

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

// fp8 caches are converted in registers (bytes permuted, a bit-exact bf16 construction for
// bf16 q) unless RoPE runs in the kernel; every head dim and dtype pair, codes that are mostly
// subnormal (with q scaled up so that the keys still shape the softmax), and RoPE's
// shared-memory path.
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
    BatchCase c = base();
    c.huge_negative = true;
    c.with_lse = false;
    RunBatch(c, rng);
  }
}

// Appends a case of `qo` / `kv` heads over `lens` to `cases`; the pointer is valid until the
// next append.
BatchCase* AddCase(std::vector<BatchCase>& cases, int qo, int kv, std::vector<int> lens) {
  BatchCase c;
  c.num_qo_heads = qo;
  c.num_kv_heads = kv;
  c.lens = std::move(lens);
  cases.push_back(c);
  return &cases.back();
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
    for (int len : c.lens) {
      const int start =
          c.options.window_left >= 0 ? std::max(0, len - 1 - c.options.window_left) : 0;
      reqs.push_back({0, len, start});
    }
    const int cluster = ops::BuildDecodeSchedule(reqs, limits).cluster;
    INFO(Describe(c) << ": cluster " << cluster);
    CHECK(cluster > 1);
    RunBatch(c, rng);
  }
}

// A CUDA graph captured once replays correctly after plans of other lengths and batch sizes
// (with `forced_ctas` > 0: under a forced persistent grid of at most that many CTAs).
void GraphReplay(std::mt19937& rng, int forced_ctas) {
  BatchCase c;
  c.num_qo_heads = 16;
  c.num_kv_heads = 4;
  const int max_b = 16;
  c.lens = MixedLengths(max_b, 6000, 16, rng);
  PagedCache pc = BuildCache(c, rng);  // the cache of the largest batch; plans use prefixes
  const int hq = c.num_qo_heads, d = c.head_dim;
  std::vector<float> q = RandomNormal(int64_t(max_b) * hq * d, rng);
  std::vector<double> qd;
  DeviceBuffer dq = Upload16(c.q_dtype, q, &qd), dout(int64_t(max_b) * hq * d * 2),
               dlse(max_b * hq * 4);
  BatchDecodeConfig cfg;
  cfg.num_qo_heads = hq;
  cfg.num_kv_heads = c.num_kv_heads;
  cfg.head_dim = d;
  cfg.page_size = c.page_size;
  cfg.max_batch_size = max_b;
  cfg.cuda_graph = true;
  auto wrapper = BatchDecode::Create(TestEngine(), cfg);
  REQUIRE(wrapper.ok());
  BatchDecode& w = **wrapper;
  DeviceBuffer ws(w.WorkspaceBytes());
  TensorView tk, tv;
  CacheViews(c, pc, &tk, &tv);
  const TensorView tq = TensorView::Contiguous(dq.data(), c.q_dtype, {max_b, hq, d});
  const TensorView tout = TensorView::Contiguous(dout.data(), c.q_dtype, {max_b, hq, d});
  const TensorView tlse = TensorView::Contiguous(dlse.data(), DType::kF32, {max_b, hq});
  const TensorView tidx = TensorView::Contiguous(pc.indices.data(), DType::kI32,
                                                 {static_cast<int64_t>(pc.page_ids.size())});
  // A plan beyond the fixed limits is refused.
  std::vector<int32_t> big_indptr(max_b + 2, 0), big_last(max_b + 1, 0);
  Status refused = w.Plan(big_indptr.data(), big_last.data(), max_b + 1, {}, ws.data(), ws.bytes());
  CHECK(refused.code() == StatusCode::kInvalidArgument);

  // Plans for a prefix of the batch: lengths are cut so that each plan schedules differently.
  CUstream plan_stream = nullptr;
  auto plan = [&](int b, int cut) {
    BatchCase sub = c;
    sub.lens.resize(b);
    std::vector<int32_t> indptr(pc.indptr.begin(), pc.indptr.begin() + b + 1);
    std::vector<int32_t> last(std::max(b, 0));  // b >= 0; the max quiets GCC's size warning
    for (int r = 0; r < b; ++r) {
      sub.lens[r] = std::min(c.lens[r], cut);
      const int pages = (sub.lens[r] + c.page_size - 1) / c.page_size;
      indptr[r + 1] = indptr[r] + pages;
      last[r] = pages ? sub.lens[r] - (pages - 1) * c.page_size : 0;
    }
    // The prefix keeps each request's first pages: rebuild page ids in the same order.
    PagedCache view;
    view.indptr = indptr;
    view.page_ids.clear();
    for (int r = 0; r < b; ++r)
      for (int p = 0; p < indptr[r + 1] - indptr[r]; ++p)
        view.page_ids.push_back(pc.page_ids[pc.indptr[r] + p]);
    Status s = w.Plan(indptr.data(), last.data(), b, {}, ws.data(), ws.bytes(), plan_stream);
    INFO(s.ToString());
    REQUIRE(s.ok());
    return std::make_pair(sub, std::move(view));
  };
  auto check = [&](const BatchCase& sub, PagedCache& view, int b) {
    view.host_k = pc.host_k;
    view.host_v = pc.host_v;
    std::vector<double> ref_out, ref_lse;
    std::vector<double> qb(qd.begin(), qd.begin() + int64_t(b) * hq * d);
    Reference(sub, view, qb, nullptr, {}, &ref_out, &ref_lse);
    std::vector<float> out = Download16(c.q_dtype, dout, int64_t(b) * hq * d);
    std::vector<float> lse = DownloadF32(dlse, int64_t(b) * hq);
    CheckDecode(out, ref_out, &lse, ref_lse, OutTolerance(c.q_dtype, false, false),
                "graph " + Describe(sub));
  };
  // The kv_indices a plan's prefix uses must sit where its indptr points: upload per plan.
  auto upload_indices = [&](const PagedCache& view) {
    if (!view.page_ids.empty()) pc.indices.Upload(view.page_ids.data(), view.page_ids.size() * 4);
  };

  auto [sub1, view1] = plan(12, 6000);
  upload_indices(view1);
  REQUIRE(w.Run(tq, tk, tv, tidx, tout, tlse).ok());  // warm-up outside the capture
  if (DryRun()) return;
  Synchronize();
  const runtime::DriverApi& api = **runtime::Driver();
  CUstream stream;
  REQUIRE(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  plan_stream = stream;
  REQUIRE(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  Status captured = w.Run(tq, tk, tv, tidx, tout, tlse, stream);
  CUgraph graph;
  REQUIRE(api.cuStreamEndCapture(stream, &graph) == CUDA_SUCCESS);
  REQUIRE(captured.ok());
  CUgraphExec exec;
  REQUIRE(api.cuGraphInstantiate(&exec, graph, 0) == CUDA_SUCCESS);
  for (auto [b, cut] : {std::pair{12, 6000}, {16, 300}, {5, 6000}, {16, 100000}}) {
    auto [sub, view] = plan(b, cut);
    upload_indices(view);
    if (forced_ctas > 0) {  // the replayed launch runs the persistent form
      Synchronize();
      int32_t header[4];
      ws.Download(header, sizeof(header));
      INFO("graph plan B=" << b << " cut " << cut << ": persistent CTAs " << header[2]);
      CHECK(header[2] == std::min(forced_ctas, header[0] * c.num_kv_heads));
    }
    dout.Fill(0xFF);
    dlse.Fill(0xFF);
    Synchronize();
    REQUIRE(api.cuGraphLaunch(exec, stream) == CUDA_SUCCESS);
    REQUIRE(api.cuStreamSynchronize(stream) == CUDA_SUCCESS);
    check(sub, view, b);
  }
  api.cuGraphExecDestroy(exec);
  api.cuGraphDestroy(graph);
  api.cuStreamDestroy(stream);
}

TEST_CASE("batch decode: a CUDA graph captured once replays correctly after new plans",
          "[gpu][decode]") {
  std::mt19937 rng(Seed());
  GraphReplay(rng, 0);
}

// Forces the persistent form (every plan of a 16-bit cache that does not cluster) with at most
// `ctas` CTAs for wrappers created in this scope.
struct ForcePersistent {
  explicit ForcePersistent(int ctas) {
    ops::SetDecodePersistentForTesting(ops::kPersistentAlways, ctas);
  }
  ~ForcePersistent() { ops::SetDecodePersistentForTesting(-1, 0); }
};

// The persistent grid on small batches (short enough for compute-sanitizer racecheck): 3 CTAs
// with many short units each, a request split and merged by its last CTA inside the loop, empty
// requests, RoPE, ALiBi, a window with sinks, head dim 64, two query tiles. (The graph case
// forced onto a persistent grid follows it.)
TEST_CASE("batch decode: persistent grid, short units and merges", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  {
    ForcePersistent force(3);
    std::vector<BatchCase> cases;
    auto add = [&](std::vector<int> lens) { return AddCase(cases, 8, 2, std::move(lens)); };
    add({1500, 0, 1, 17, 64, 65, 200});  // the long one splits: merged inside the loop
    add({300, 129, 0})->options.rope = true;
    add({250, 100, 33})->options.alibi = true;
    {
      BatchCase* c = add({700, 90, 5});
      c->options.window_left = 100;
      c->sinks = true;
      c->q_dtype = c->kv_dtype = DType::kF16;
    }
    add({400, 64, 3})->head_dim = 64;
    {
      BatchCase* c = add({300, 20});
      c->num_qo_heads = 34;  // group 17
    }
    for (BatchCase c : cases) {
      c.expect_persistent = 3;
      RunBatch(c, rng);
    }
  }
}

TEST_CASE("batch decode: a CUDA graph replays correctly on a forced persistent grid",
          "[gpu][decode]") {
  std::mt19937 rng(Seed());
  ForcePersistent force(5);
  GraphReplay(rng, 5);
}

// The persistent grid: resident CTAs walk lists of (work item, head tile) units with one
// pipeline across unit boundaries. Forced over ragged batches (lengths 0 .. 16384: empty
// requests, single keys, page boundaries, long requests split and merged by their last CTA
// inside the loop), on small grids (7 CTAs: dozens of units each, merges of many partials) and
// at the resident capacity; every 16-bit head dim, page sizes 1/16/64, layouts, GQA 1/4/5/8/17,
// the knobs, logits near -500000; each plan's header is checked to be persistent (fp8 never is).
TEST_CASE("batch decode: persistent grid over ragged batches", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  auto sms = runtime::MultiprocessorCount(TestEngine(), 0);
  REQUIRE(sms.ok());
  for (int ctas : {7, 0}) {
    ForcePersistent force(ctas);
    std::vector<BatchCase> cases;
    auto add = [&](std::vector<int> lens) { return AddCase(cases, 32, 8, std::move(lens)); };
    add(MixedLengths(24, 16384, 16, rng));
    add({16384, 0, 1, 5000, 64, 65, 0});
    {
      BatchCase* c = add(MixedLengths(9, 3000, 1, rng));
      c->num_qo_heads = c->num_kv_heads = 4;
      c->page_size = 1;
    }
    {
      BatchCase* c = add(MixedLengths(20, 5000, 64, rng));
      c->num_qo_heads = 16;
      c->num_kv_heads = 2;
      c->page_size = 64;
      c->layout = KVLayout::kHND;
      c->combined = false;
    }
    {
      BatchCase* c = add(MixedLengths(12, 4000, 16, rng));
      c->q_dtype = c->kv_dtype = DType::kF16;
      c->num_qo_heads = 16;
      c->num_kv_heads = 4;
      c->options.logits_soft_cap = 5.f;
      c->options.sm_scale = 0.5f;
      c->options.window_left = 300;
      c->sinks = true;
    }
    {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->num_qo_heads = 10;  // group 5
      c->num_kv_heads = 2;
      c->options.alibi = true;
      c->with_lse = false;
    }
    {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->q_dtype = c->kv_dtype = DType::kF16;
      c->options.rope = true;
    }
    for (int d : {64, 256}) {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->head_dim = d;
      c->num_qo_heads = 16;
      c->num_kv_heads = 2;
    }
    {
      BatchCase* c = add(MixedLengths(8, 3000, 16, rng));
      c->num_qo_heads = 34;  // group 17: two query tiles per kv head
      c->num_kv_heads = 2;
    }
    {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->huge_negative = true;
      c->with_lse = false;
    }
    add({0, 0, 0});
    for (BatchCase c : cases) {
      // At most `ctas` CTAs, else the resident capacity (SMs x CTAs per SM).
      c.expect_persistent =
          ctas > 0 ? ctas : *sms * ops::DecodeCtasPerSm(c.head_dim, DTypeBytes(c.kv_dtype));
      RunBatch(c, rng);
    }
    BatchCase fp8 = cases[0];  // fp8 KV keeps one CTA per unit
    fp8.kv_dtype = DType::kF8E4M3;
    fp8.lens = MixedLengths(10, 3000, 16, rng);
    fp8.expect_persistent = 0;
    RunBatch(fp8, rng);
  }
}

}  // namespace
}  // namespace flashjit::test
