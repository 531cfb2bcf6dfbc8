#include "tools/demo/demo_cases.h"

#include <flashjit/decode.h>
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "src/runtime/driver.h"
#include "tests/reference/attention_ref.h"
#include "tests/reference/half.h"
#include "tests/reference/norm_ref.h"

namespace flashjit::demo {
namespace {

// Minimal device buffer for the demo (the tests have a fuller one).
struct Buffer {
  CUdeviceptr p = 0;
  const runtime::DriverApi* d = *runtime::Driver();
  explicit Buffer(size_t bytes) {
    runtime::PrimaryContext(0);
    d->cuMemAlloc(&p, bytes);
  }
  ~Buffer() { d->cuMemFree(p); }
  void* ptr() const { return reinterpret_cast<void*>(p); }
};

Outcome RmsNormCase(Engine& engine) {
  const int64_t rows = 64, hidden = 4096;
  std::mt19937 rng(std::random_device{}());
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<uint16_t> x(rows * hidden), w(hidden), out(rows * hidden, 0xffff);
  std::vector<double> xd(x.size()), wd(w.size());
  for (size_t i = 0; i < x.size(); ++i) xd[i] = ref::Bf16ToFloat(x[i] = ref::FloatToBf16(nd(rng)));
  for (size_t i = 0; i < w.size(); ++i) wd[i] = ref::Bf16ToFloat(w[i] = ref::FloatToBf16(nd(rng)));
  Buffer bx(x.size() * 2), bw(w.size() * 2), bo(out.size() * 2);
  auto* d = *runtime::Driver();
  d->cuMemcpyHtoD(bx.p, x.data(), x.size() * 2);
  d->cuMemcpyHtoD(bw.p, w.data(), w.size() * 2);
  d->cuMemcpyHtoD(bo.p, out.data(), out.size() * 2);  // poison: NaN everywhere
  Status s = RmsNorm(engine, TensorView::Contiguous(bx.ptr(), DType::kBF16, {rows, hidden}),
                     TensorView::Contiguous(bw.ptr(), DType::kBF16, {hidden}),
                     TensorView::Contiguous(bo.ptr(), DType::kBF16, {rows, hidden}), 1e-6f);
  if (!s.ok()) return {false, s.ToString()};
  if (CUresult rc = d->cuCtxSynchronize(); rc != CUDA_SUCCESS)
    return {false, runtime::CudaStatus(rc, "rmsnorm").ToString()};
  d->cuMemcpyDtoH(out.data(), bo.p, out.size() * 2);
  std::vector<double> ref = ref::RmsNorm(xd, wd, rows, hidden, 1e-6, false);
  double num = 0, den = 0;
  int64_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double g = ref::Bf16ToFloat(out[i]);
    if (!std::isfinite(g)) ++bad;
    num += (g - ref[i]) * (g - ref[i]);
    den += ref[i] * ref[i];
  }
  double rel = std::sqrt(num / den);
  return {bad == 0 && rel < 8e-3,
          fmt::format("bf16 {}x{}: rel_l2 {:.2e}, unwritten {}", rows, hidden, rel, bad)};
}

// Llama-3.1-8B-shaped single-request decode: 32 query / 8 KV heads, head_dim 128, 4096 keys,
// one of them with logits far below zero, against the fp64 reference.
Outcome DecodeCase(Engine& engine) {
  const int hq = 32, hkv = 8, d = 128;
  const int64_t len = 4096;
  std::mt19937 rng(std::random_device{}());
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<uint16_t> q(hq * d), k(len * hkv * d), v(len * hkv * d), out(hq * d, 0xffff);
  std::vector<double> qd(q.size()), kd(k.size()), vd(v.size());
  for (size_t i = 0; i < q.size(); ++i) qd[i] = ref::Bf16ToFloat(q[i] = ref::FloatToBf16(nd(rng)));
  for (size_t i = 0; i < k.size(); ++i) kd[i] = ref::Bf16ToFloat(k[i] = ref::FloatToBf16(nd(rng)));
  for (size_t i = 0; i < v.size(); ++i) vd[i] = ref::Bf16ToFloat(v[i] = ref::FloatToBf16(nd(rng)));
  auto* drv = *runtime::Driver();
  const size_t ws_bytes = SingleDecodeWorkspaceBytes(hq, d);
  Buffer bq(q.size() * 2), bk(k.size() * 2), bv(v.size() * 2), bo(out.size() * 2), blse(hq * 4),
      bws(ws_bytes);
  drv->cuMemcpyHtoD(bq.p, q.data(), q.size() * 2);
  drv->cuMemcpyHtoD(bk.p, k.data(), k.size() * 2);
  drv->cuMemcpyHtoD(bv.p, v.data(), v.size() * 2);
  drv->cuMemcpyHtoD(bo.p, out.data(), out.size() * 2);
  Status s = SingleDecode(engine, TensorView::Contiguous(bq.ptr(), DType::kBF16, {hq, d}),
                          TensorView::Contiguous(bk.ptr(), DType::kBF16, {len, hkv, d}),
                          TensorView::Contiguous(bv.ptr(), DType::kBF16, {len, hkv, d}),
                          TensorView::Contiguous(bo.ptr(), DType::kBF16, {hq, d}),
                          TensorView::Contiguous(blse.ptr(), DType::kF32, {hq}), KVLayout::kNHD, {},
                          bws.ptr(), ws_bytes);
  if (!s.ok()) return {false, s.ToString()};
  if (CUresult rc = drv->cuCtxSynchronize(); rc != CUDA_SUCCESS)
    return {false, runtime::CudaStatus(rc, "decode").ToString()};
  drv->cuMemcpyDtoH(out.data(), bo.p, out.size() * 2);
  std::vector<double> ref_out(hq * d), ref_lse(hq);
  ref::DecodeAttention(qd.data(), kd.data(), vd.data(), len, hq, hkv, d, {}, ref_out.data(),
                       ref_lse.data());
  double num = 0, den = 0;
  int64_t bad = 0;
  for (size_t i = 0; i < ref_out.size(); ++i) {
    double g = ref::Bf16ToFloat(out[i]);
    if (!std::isfinite(g)) ++bad;
    num += (g - ref_out[i]) * (g - ref_out[i]);
    den += ref_out[i] * ref_out[i];
  }
  double rel = std::sqrt(num / den);
  return {bad == 0 && rel < 2e-2,
          fmt::format("bf16 32/8 heads D128 L{}: rel_l2 {:.2e}, unwritten {}", len, rel, bad)};
}

}  // namespace

std::vector<Case> AllCases() { return {{"rmsnorm", RmsNormCase}, {"single decode", DecodeCase}}; }

}  // namespace flashjit::demo
