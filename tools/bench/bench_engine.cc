// Engine overheads: disk-hit load and host time per call against a bare cuLaunchKernel. (Cold compile time is measured by `flashjit cache build`
// on the CPU machine; the GPU run compiles nothing.)
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

#include "src/engine/engine_impl.h"
#include "src/compile/compiler.h"
#include "src/runtime/kernel.h"
#include "src/runtime/driver.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;
using Clock = std::chrono::steady_clock;

namespace {

double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  const int64_t rows = 1, hidden = 128;
  void* x = bench::DeviceAlloc(rows * hidden * 2);
  void* w = bench::DeviceAlloc(hidden * 2);
  void* out = bench::DeviceAlloc(rows * hidden * 2);
  bench::DeviceFillRandom16(x, rows * hidden, 1.f);
  bench::DeviceFillRandom16(w, hidden, 1.f);
  auto tx = TensorView::Contiguous(x, DType::kBF16, {rows, hidden});
  auto tw = TensorView::Contiguous(w, DType::kBF16, {hidden});
  auto to = TensorView::Contiguous(out, DType::kBF16, {rows, hidden});
  if (bench::DryRun()) {
    Check(RmsNorm(engine, tx, tw, to));
    return 0;
  }

  // 1. Disk hit: a fresh engine finds the cubin in SQLite and loads the module.
  auto t0 = Clock::now();
  auto fresh = Engine::Create();
  if (!fresh.ok()) throw std::runtime_error(fresh.status().ToString());
  auto t1 = Clock::now();
  Check(RmsNorm(**fresh, tx, tw, to));
  auto t2 = Clock::now();
  fmt::print("engine create {:.0f} us; first call (SQLite read + SHA-256 + module load + launch) {:.0f} us\n",
             Us(t0, t1), Us(t1, t2));

  // 2. Host time per call: RmsNorm() (lookup + checks + launch) against a bare cuLaunchKernel
  // of a trivial kernel with the same grid, compiled here with NVRTC (the floor of any launch).
  auto d = *runtime::Driver();
  auto inc = compile::FindCudaIncludeDir("");
  auto cubin = compile::Compile(
      {"extern \"C\" __global__ void touch(float* p) { if (threadIdx.x == 0 && p) p[0] = 1.f; }",
       "touch", "sm_90a", "bench"},
      *inc);
  if (!cubin.ok()) throw std::runtime_error(cubin.status().ToString());
  auto bare = runtime::Kernel::Load(cubin->cubin, {"touch"}, 0, "touch");
  if (!bare.ok()) throw std::runtime_error(bare.status().ToString());
  void* null_arg = nullptr;
  void* args[] = {&null_arg};
  for (int rep = 0; rep < 3; ++rep) {
    const int m = 20000;
    d->cuCtxSynchronize();
    t0 = Clock::now();
    for (int i = 0; i < m; ++i) Check(RmsNorm(engine, tx, tw, to));
    t1 = Clock::now();
    d->cuCtxSynchronize();
    auto t2b = Clock::now();
    for (int i = 0; i < m; ++i)
      d->cuLaunchKernel((*bare)->function(0), 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
    auto t3 = Clock::now();
    d->cuCtxSynchronize();
    fmt::print("host time per call: flashjit RmsNorm {:.2f} us, bare cuLaunchKernel {:.2f} us\n",
               Us(t0, t1) / m, Us(t2b, t3) / m);
  }
  double us = bench::MedianMicros([&](int) { Check(RmsNorm(engine, tx, tw, to)); }, 200, 20);
  bench::Report("launch_latency", "rmsnorm bf16 1x128 (event-timed)", us, 2.0 * hidden * 2);
  return 0;
}
