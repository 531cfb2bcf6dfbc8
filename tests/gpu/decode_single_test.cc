// SingleDecode on the GPU against the fp64 reference: shapes, layouts, GQA ratios, split-KV,
// knobs, and the adversarial cases (kv_len 0 and 1, tile boundaries, logits near -5e5).
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
};

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
  if (DryRun()) return;

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
  ro.sinks = c.sinks ? &sinks_d : nullptr;
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
