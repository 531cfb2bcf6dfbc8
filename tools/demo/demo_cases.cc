#include "tools/demo/demo_cases.h"

#include <flashjit/norm.h>
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "src/runtime/driver.h"
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

}  // namespace

std::vector<Case> AllCases() { return {{"rmsnorm", RmsNormCase}}; }

}  // namespace flashjit::demo
