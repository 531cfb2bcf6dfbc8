// SingleDecode on the GPU against the fp64 reference: shapes, layouts, GQA ratios, split-KV,
// knobs, and the adversarial cases (kv_len 0 and 1, tile boundaries, logits near -5e5).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/runtime/copy.h"
#include "tests/gpu/decode_test_util.h"

namespace flashjit::test {
namespace {

struct SingleCase {
  DType q_dtype = DType::kBF16, kv_dtype = DType::kBF16;
  int num_qo_heads = 32, num_kv_heads = 8, head_dim = 128;
  int64_t kv_len = 1000;
  KVLayout layout = KVLayout::kNHD;
  bool workspace = true, with_lse = true, sinks = false;
  bool huge_negative = false;  // every logit near -524288
  DecodeOptions options;
  // >= 0: the split SingleDecode picks must be merged by a cluster of this many CTAs per head
  // tile (0: the workspace's merge), and the workspace must stay untouched by a cluster merge.
  int expect_cluster = -1;
};

// Whether FLASHJIT_DECODE_CLUSTER=0 turns the cluster merge off in this process.
bool ClusterKnobOff() {
  const char* v = std::getenv("FLASHJIT_DECODE_CLUSTER");
  return v && std::strcmp(v, "0") == 0;
}

// The uniform split SingleDecode makes for this case (the same limits it builds).
ops::SingleDecodeSplit SplitOf(const SingleCase& c) {
  const int group = c.num_qo_heads / c.num_kv_heads;
  const int kv_bytes = DTypeBytes(c.kv_dtype);
  auto sms = runtime::MultiprocessorCount(TestEngine(), 0);
  REQUIRE(sms.ok());
  ops::DecodeScheduleLimits limits;
  limits.ctas_per_item = c.num_kv_heads * ((group + 15) / 16);
  limits.slots = *sms * ops::DecodeCtasPerSm(c.head_dim, kv_bytes);
  limits.max_items = c.workspace ? 128 : 0;
  if (c.workspace)
    limits.max_cluster = ops::DecodeMaxCluster(TestEngine(), 0, c.head_dim, kv_bytes);
  return ops::ChooseSingleDecodeSplit(c.kv_len, limits);
}

void RunSingle(const SingleCase& c, std::mt19937& rng) {
  const int hq = c.num_qo_heads, hkv = c.num_kv_heads, d = c.head_dim;
  const int64_t len = c.kv_len, kv_elems = len * hkv * d;
  std::vector<float> q = RandomNormal(int64_t(hq) * d, rng);
  std::vector<float> k = RandomNormal(kv_elems, rng, c.huge_negative ? 0.2f : 1.f);
  std::vector<float> v = RandomNormal(kv_elems, rng);
  DecodeOptions opts = c.options;
  if (c.huge_negative) {  // exact big terms: 1024 * -512 in dim 0
    for (int h = 0; h < hq; ++h) q[int64_t(h) * d] = 1024.f;
    for (int64_t i = 0; i < len * hkv; ++i) k[i * d] = -512.f;
    opts.sm_scale = 1.f;
  }
  // The device layout (HND transposes tokens and heads); the reference gets NHD.
  auto to_device = [&](const std::vector<float>& x) {
    if (c.layout == KVLayout::kNHD) return x;
    std::vector<float> y(x.size());
    for (int64_t j = 0; j < len; ++j)
      for (int h = 0; h < hkv; ++h)
        for (int i = 0; i < d; ++i) y[(int64_t(h) * len + j) * d + i] = x[(j * hkv + h) * d + i];
    return y;
  };
  std::vector<double> qd, kd, vd, sinks_d;
  DeviceBuffer dq = Upload16(c.q_dtype, q, &qd);
  DeviceBuffer dk = UploadAs(c.kv_dtype, to_device(k), &kd);
  DeviceBuffer dv = UploadAs(c.kv_dtype, to_device(v), &vd);
  // Back to NHD for the reference.
  std::vector<double> kn(kv_elems), vn(kv_elems);
  for (int64_t j = 0; j < len; ++j)
    for (int h = 0; h < hkv; ++h)
      for (int i = 0; i < d; ++i) {
        const int64_t src =
            c.layout == KVLayout::kNHD ? (j * hkv + h) * d + i : (int64_t(h) * len + j) * d + i;
        kn[(j * hkv + h) * d + i] = kd[src];
        vn[(j * hkv + h) * d + i] = vd[src];
      }
  DeviceBuffer dout(int64_t(hq) * d * 2), dlse(hq * 4), dsinks(hq * 4);
  dout.Fill(0xFF);
  dlse.Fill(0xFF);
  if (c.sinks) {
    std::vector<float> s = RandomNormal(hq, rng, 2.f);
    dsinks.Upload(s.data(), hq * 4);
    sinks_d.assign(s.begin(), s.end());
    opts.sinks = TensorView::Contiguous(dsinks.data(), DType::kF32, {hq});
  }
  const size_t ws_bytes = c.workspace ? SingleDecodeWorkspaceBytes(hq, d) : 0;
  DeviceBuffer ws(ws_bytes);
  if (c.expect_cluster >= 0) ws.Fill(0xA5);
  const std::vector<int64_t> kv_shape = c.layout == KVLayout::kNHD
                                            ? std::vector<int64_t>{len, hkv, d}
                                            : std::vector<int64_t>{hkv, len, d};
  TensorView tk =
      TensorView::Contiguous(dk.data(), c.kv_dtype, {kv_shape[0], kv_shape[1], kv_shape[2]});
  TensorView tv =
      TensorView::Contiguous(dv.data(), c.kv_dtype, {kv_shape[0], kv_shape[1], kv_shape[2]});
  TensorView tlse =
      c.with_lse ? TensorView::Contiguous(dlse.data(), DType::kF32, {hq}) : TensorView{};
  Status s = SingleDecode(TestEngine(), TensorView::Contiguous(dq.data(), c.q_dtype, {hq, d}), tk,
                          tv, TensorView::Contiguous(dout.data(), c.q_dtype, {hq, d}), tlse,
                          c.layout, opts, c.workspace ? ws.data() : nullptr, ws_bytes, nullptr);
  const std::string what = fmt::format(
      "single {}/{} Hq {} Hkv {} D {} L {} {} ws {} cap {} alibi {} rope {} window {} sinks {} "
      "huge {}",
      DTypeName(c.q_dtype), DTypeName(c.kv_dtype), hq, hkv, d, len,
      c.layout == KVLayout::kNHD ? "NHD" : "HND", c.workspace, opts.logits_soft_cap, opts.alibi,
      opts.rope, opts.window_left, c.sinks, c.huge_negative);
  INFO(what << ": " << s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (c.expect_cluster >= 0) {
    const ops::SingleDecodeSplit split = SplitOf(c);
    INFO(what << ": chunk " << split.chunk << " x " << split.chunks << ", cluster "
              << split.cluster);
    CHECK(split.cluster == (ClusterKnobOff() ? 0 : c.expect_cluster));
    if (!DryRun() && c.workspace) {
      // A cluster merge writes no partials; the merge kernel's path writes them.
      std::vector<uint8_t> bytes(ws_bytes);
      ws.Download(bytes.data(), ws_bytes);
      const bool untouched =
          std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0xA5; });
      CHECK(untouched == (split.cluster > 1 || split.chunks == 1));
    }
  }
  if (DryRun()) return;

  const ref::DecodeRefOptions ro = RefOptions(opts, c.sinks ? &sinks_d : nullptr);
  std::vector<double> ref_out(int64_t(hq) * d), ref_lse(hq);
  ref::DecodeAttention(qd.data(), kn.data(), vn.data(), len, hq, hkv, d, ro, ref_out.data(),
                       ref_lse.data());
  std::vector<float> out = Download16(c.q_dtype, dout, int64_t(hq) * d);
  std::vector<float> lse = DownloadF32(dlse, hq);
  double tol = OutTolerance(c.q_dtype, DTypeBytes(c.kv_dtype) == 1, opts.rope);
  if (c.huge_negative) tol = 0.08;  // fp32 logits near 5e5 carry ~0.03 absolute error
  CheckDecode(out, ref_out, c.with_lse ? &lse : nullptr, ref_lse, tol, what);
  if (len == 0 && !c.sinks)
    for (float x : out) CHECK(x == 0.f);
}

TEST_CASE("single decode: lengths, GQA ratios, layouts, split-KV", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  SingleCase c;
  for (KVLayout layout : {KVLayout::kNHD, KVLayout::kHND})
    for (int64_t len : {0, 1, 15, 16, 17, 63, 64, 65, 200, 1000, 4097, 16384}) {
      c.layout = layout;
      c.kv_len = len;
      c.workspace = len % 2 == 0;
      RunSingle(c, rng);
    }
  c = SingleCase{};
  for (auto [hq, hkv] : {std::pair{8, 8}, {10, 2}, {64, 8}, {40, 2}, {7, 1}}) {
    c.num_qo_heads = hq;
    c.num_kv_heads = hkv;
    for (int64_t len : {1, 129, 3000}) {
      c.kv_len = len;
      RunSingle(c, rng);
    }
  }
}

// 16-bit KV at head_dim 128 split into 2..8 chunks (of at most 2048 keys) is merged by a
// thread-block cluster per head tile, as BatchDecode's plans are (sm_90+; FLASHJIT_DECODE_CLUSTER
// =0 runs the same cases through the workspace's merge kernel and expects that): every chunk
// count 2..8, GQA ratios (group 1, 4, 5, 7, 8, 17: two query tiles), MHA with 32 kv heads at 4k
// keys (8 chunks of 576), NHD and HND, with and without LSE, sinks, a window that empties most
// chunks, soft cap, ALiBi, RoPE, f16, logits near -524288; the unsplit and no-workspace paths.
TEST_CASE("single decode: uniform splits merged by a thread-block cluster", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  REQUIRE(ops::DecodeMaxCluster(TestEngine(), 0, 128, 2) == (ClusterKnobOff() ? 0 : 8));
  std::vector<SingleCase> cases;
  auto add = [&](int64_t len, int expect) {
    SingleCase c;
    c.kv_len = len;
    c.expect_cluster = expect;
    c.layout = cases.size() % 2 ? KVLayout::kHND : KVLayout::kNHD;
    cases.push_back(c);
    return &cases.back();
  };
  add(1024, 8);  // the benchmark's shape: 8 chunks of 128
  add(65, 2);
  add(129, 3);
  add(200, 4);
  add(300, 5);
  add(700, 6);
  add(385, 7);
  add(1000, 8)->with_lse = false;
  add(64, 0);                       // one chunk: no split
  add(2048, 0);                     // 32 chunks: the workspace's merge
  add(1024, 0)->workspace = false;  // no workspace: unsplit
  add(1024, 8)->sinks = true;
  add(900, 8)->options.window_left = 100;  // 6 of 8 chunks see no key
  for (auto [hq, hkv, len, expect] : {std::tuple{8, 8, 1024, 8},
                                      {10, 2, 800, 7},
                                      {7, 1, 300, 5},
                                      {64, 8, 1024, 8},
                                      {34, 2, 1024, 8},
                                      {40, 2, 129, 3},
                                      {32, 32, 4097, 8},
                                      {32, 4, 1024, 8}}) {
    SingleCase* c = add(len, expect);
    c->num_qo_heads = hq;
    c->num_kv_heads = hkv;
    c->sinks = hq == 10;
  }
  {
    SingleCase* c = add(1024, 8);
    c->options.logits_soft_cap = 5.f;
    c->options.sm_scale = 0.5f;
  }
  add(700, 6)->options.alibi = true;
  {
    SingleCase* c = add(1024, 8);
    c->q_dtype = c->kv_dtype = DType::kF16;
    c->options.rope = true;
    c->options.rope_theta = 5e5f;
  }
  add(1024, 8)->huge_negative = true;
  for (const SingleCase& c : cases) RunSingle(c, rng);
}

TEST_CASE("single decode: dtypes and head dims", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  for (DType qt : {DType::kBF16, DType::kF16})
    for (int d : {64, 128, 256}) {
      if (qt == DType::kF16 && d == 64) continue;  // keeps the variant count down
      SingleCase c;
      c.q_dtype = c.kv_dtype = qt;
      c.head_dim = d;
      for (int64_t len : {1, 77, 2048}) {
        c.kv_len = len;
        c.layout = len == 77 ? KVLayout::kHND : KVLayout::kNHD;
        RunSingle(c, rng);
      }
    }
  for (auto [qt, kvt] : {std::pair{DType::kBF16, DType::kF8E4M3}, {DType::kF16, DType::kF8E5M2}}) {
    SingleCase c;
    c.q_dtype = qt;
    c.kv_dtype = kvt;
    c.options.k_scale = 0.5f;
    c.options.v_scale = 2.f;
    for (int64_t len : {1, 100, 5000}) {
      c.kv_len = len;
      RunSingle(c, rng);
    }
  }
}

TEST_CASE("single decode: logits far below zero and variant knobs", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  SingleCase c;
  c.huge_negative = true;
  for (int64_t len : {1, 64, 3000}) {
    c.kv_len = len;
    RunSingle(c, rng);
  }
  c = SingleCase{};
  c.kv_len = 2500;
  c.options.logits_soft_cap = 5.f;
  c.options.sm_scale = 0.5f;  // logits big enough for the cap to matter
  RunSingle(c, rng);
  c.options = {};
  c.options.alibi = true;
  RunSingle(c, rng);
  c.options = {};
  c.options.window_left = 100;
  RunSingle(c, rng);
  c.options.window_left = 0;  // the query sees only its own key
  RunSingle(c, rng);
  c.options = {};
  c.sinks = true;
  RunSingle(c, rng);
  c.kv_len = 0;  // a sink alone: output 0, lse = the sink
  RunSingle(c, rng);
  c = SingleCase{};
  c.q_dtype = c.kv_dtype = DType::kF16;
  c.options.rope = true;
  c.options.rope_theta = 5e5f;
  for (int64_t len : {1, 300, 4000}) {
    c.kv_len = len;
    RunSingle(c, rng);
  }
}

}  // namespace
}  // namespace flashjit::test
