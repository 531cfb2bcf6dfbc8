#include "tools/bench/bench_util.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <stdexcept>

#include "src/runtime/driver.h"

namespace flashjit::bench {

void CheckDriver(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) throw std::runtime_error(runtime::CudaStatus(rc, what).ToString());
}
namespace {

bool g_dry = false;
bool g_once = false;
std::vector<void*> g_allocs;
const char* g_program = "flashjit_bench";

// A benchmark reports its errors (a bad argument, no driver, a failed launch) as exceptions; one
// that escapes main ends the run with its message and exit status 2 instead of an abort.
[[noreturn]] void ReportUncaught() {
  std::string what = "unknown error";
  try {
    if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "%s: error: %s\n", g_program, what.c_str());
  std::_Exit(2);
}

const runtime::DriverApi& Api() {
  auto d = runtime::Driver();
  if (!d.ok()) throw std::runtime_error(d.status().ToString());
  runtime::PrimaryContext(0);
  return **d;
}

// A one-thread kernel that spins on the GPU's global timer for `ns` nanoseconds: it keeps the
// stream busy while the host enqueues the timed call behind it (QueuedMicros). PTX, so that the
// driver compiles it and the benchmarks need no NVRTC.
constexpr char kSpinPtx[] = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry flashjit_bench_spin(.param .u64 ns)
{
  .reg .pred %p<2>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
SPIN:
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p1, %rd4, %rd1;
  @%p1 bra SPIN;
  ret;
}
)";

void Spin(const runtime::DriverApi& d, uint64_t ns) {
  static CUfunction spin = [&] {
    CUmodule module;
    CUfunction f;
    if (CUresult rc = d.cuModuleLoadData(&module, kSpinPtx); rc != CUDA_SUCCESS)
      throw std::runtime_error(runtime::CudaStatus(rc, "cuModuleLoadData(spin)").ToString());
    if (CUresult rc = d.cuModuleGetFunction(&f, module, "flashjit_bench_spin"); rc != CUDA_SUCCESS)
      throw std::runtime_error(runtime::CudaStatus(rc, "cuModuleGetFunction(spin)").ToString());
    return f;
  }();
  void* args[] = {&ns};
  if (CUresult rc = d.cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
      rc != CUDA_SUCCESS)
    throw std::runtime_error(runtime::CudaStatus(rc, "cuLaunchKernel(spin)").ToString());
}

// Median in microseconds of `iters` calls of fn(i), each between two events and waited for;
// `before` (if any) is enqueued ahead of each start event.
double EventMedian(const runtime::DriverApi& d, const std::function<void(int)>& fn, int iters,
                   const std::function<void()>& before) {
  CUevent start, stop;
  d.cuEventCreate(&start, CU_EVENT_DEFAULT);
  d.cuEventCreate(&stop, CU_EVENT_DEFAULT);
  std::vector<float> times;
  for (int i = 0; i < iters; ++i) {
    if (before) before();
    d.cuEventRecord(start, nullptr);
    fn(i);
    d.cuEventRecord(stop, nullptr);
    d.cuEventSynchronize(stop);
    float ms = 0;
    d.cuEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  if (CUresult rc = d.cuCtxSynchronize(); rc != CUDA_SUCCESS)
    throw std::runtime_error(runtime::CudaStatus(rc, "benchmark kernels").ToString());
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2] * 1000.0;
}

}  // namespace

bool DryRun() { return g_dry; }
bool Once() { return g_once; }

Engine& Setup(int argc, char** argv) {
  if (argc > 0) {
    const char* slash = std::strrchr(argv[0], '/');
    g_program = slash ? slash + 1 : argv[0];
  }
  std::set_terminate(ReportUncaught);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--dry-run")) g_dry = true;
    if (!std::strcmp(argv[i], "--once")) g_once = true;
  }
  if (const char* v = std::getenv("FLASHJIT_DRY_RUN"); v && !std::strcmp(v, "1")) g_dry = true;
  if (g_dry) {
    setenv("FLASHJIT_DRY_RUN", "1", 1);
    if (!std::getenv("FLASHJIT_ARCH")) setenv("FLASHJIT_ARCH", "sm_90a", 1);
  }
  static std::shared_ptr<Engine> engine = [] {
    auto e = Engine::Create();
    if (!e.ok()) throw std::runtime_error(e.status().ToString());
    return *e;
  }();
  return *engine;
}

double MedianMicros(const std::function<void(int)>& fn, int iters, int warmup) {
  if (g_dry) {
    fn(0);
    return 0;
  }
  const auto& d = Api();
  if (g_once) {
    fn(0);
    if (CUresult rc = d.cuCtxSynchronize(); rc != CUDA_SUCCESS)
      throw std::runtime_error(runtime::CudaStatus(rc, "benchmark kernel").ToString());
    return 0;
  }
  for (int i = 0; i < warmup; ++i) fn(i);
  return EventMedian(d, fn, iters, nullptr);
}

double QueuedMicros(const std::function<void(int)>& fn, int iters, int warmup) {
  if (g_dry || g_once) return 0;
  const auto& d = Api();
  // Warm-up, timing the host's enqueue of each call to size the spin.
  double host_ns = 0;
  for (int i = 0; i < std::max(warmup, 1); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn(i);
    host_ns = std::max<double>(
        host_ns,
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
    d.cuCtxSynchronize();
  }
  uint64_t spin_ns = static_cast<uint64_t>(std::clamp(4 * host_ns, 30e3, 2e6));
  if (const char* v = std::getenv("FLASHJIT_BENCH_SPIN_US"))
    spin_ns = std::strtoull(v, 0, 10) * 1000;
  return EventMedian(d, fn, iters, [&] { Spin(d, spin_ns); });
}

Timings TimeCall(const std::function<void(int)>& fn, int iters, int warmup) {
  Timings t;
  t.alone = MedianMicros(fn, iters, warmup);
  t.queued = QueuedMicros(fn, iters, warmup);
  t.b2b = BackToBackMicros(fn, iters);
  return t;
}

double BackToBackMicros(const std::function<void(int)>& fn, int iters) {
  if (g_dry || g_once) return 0;
  const auto& d = Api();
  for (int i = 0; i < 5; ++i) fn(i);
  CUevent start, stop;
  d.cuEventCreate(&start, CU_EVENT_DEFAULT);
  d.cuEventCreate(&stop, CU_EVENT_DEFAULT);
  d.cuEventRecord(start, nullptr);
  for (int i = 0; i < iters; ++i) fn(i);
  d.cuEventRecord(stop, nullptr);
  d.cuEventSynchronize(stop);
  float ms = 0;
  d.cuEventElapsedTime(&ms, start, stop);
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  if (CUresult rc = d.cuCtxSynchronize(); rc != CUDA_SUCCESS)
    throw std::runtime_error(runtime::CudaStatus(rc, "benchmark kernels").ToString());
  return ms * 1000.0 / iters;
}

namespace {
std::string Note(const char* what, double micros, double bytes) {
  return fmt::format(" | {} {:.2f} us {:.3f} TB/s", what, micros,
                     micros > 0 ? bytes / (micros * 1e-6) / 1e12 : 0.0);
}
}  // namespace

std::string BackToBackNote(double micros, double bytes) {
  return Note("back-to-back", micros, bytes);
}
std::string QueuedNote(double micros, double bytes) { return Note("queued", micros, bytes); }
std::string TimingsNote(const Timings& t, double bytes) {
  return QueuedNote(t.queued, bytes) + BackToBackNote(t.b2b, bytes);
}

void ReportDeviceCopy(const void* src, void* dst, size_t bytes, const std::string& what) {
  using CopyFn = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  if (g_dry || g_once) return;
  // The driver table (src/runtime/driver.h) has no device-to-device copy: take it from libcuda.
  static CopyFn copy = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW);
    return lib ? reinterpret_cast<CopyFn>(dlsym(lib, "cuMemcpyDtoDAsync_v2")) : nullptr;
  }();
  if (!copy) {
    fmt::print("device_copy: cuMemcpyDtoDAsync_v2 not found in libcuda.so.1, not timed\n");
    return;
  }
  auto call = [&](int) {
    if (CUresult rc = copy(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                           bytes, nullptr);
        rc != CUDA_SUCCESS)
      throw std::runtime_error(runtime::CudaStatus(rc, "cuMemcpyDtoDAsync").ToString());
  };
  const Timings t = TimeCall(call);
  Report("device_copy", what, t.alone, 2.0 * bytes, 0,
         "cuMemcpyDtoDAsync" + TimingsNote(t, 2.0 * bytes));
}

void Report(const std::string& bench, const std::string& shape, double micros, double bytes,
            double flops, const std::string& note) {
  if (g_dry) return;
  const double tbs = micros > 0 ? bytes / (micros * 1e-6) / 1e12 : 0;
  const double tflops = micros > 0 ? flops / (micros * 1e-6) / 1e12 : 0;
  std::string line =
      fmt::format("{}\t{}\t{:.2f}\t{:.3f}\t{:.1f}\t{}", bench, shape, micros, tbs, tflops, note);
  fmt::print("{:<22} {:<40} {:>9.2f} us {:>6.3f} TB/s {:>7.1f} TFLOP/s  {}\n", bench, shape, micros,
             tbs, tflops, note);
  if (const char* out = std::getenv("OUT"))
    std::ofstream(std::string(out) + "/" + bench + ".tsv", std::ios::app) << line << "\n";
}

void* DeviceAlloc(size_t bytes) {
  if (g_dry) {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    g_allocs.push_back(p);
    return p;
  }
  CUdeviceptr p;
  if (CUresult rc = Api().cuMemAlloc(&p, bytes); rc != CUDA_SUCCESS)
    throw std::runtime_error(runtime::CudaStatus(rc, "cuMemAlloc").ToString());
  return reinterpret_cast<void*>(p);
}

void DeviceFillRandom16(void* p, size_t count, float stddev) {
  if (g_dry) return;
  // Random bf16-style bit patterns with a bounded exponent: finite for fp16 and bf16 alike.
  std::mt19937 rng(1234);
  std::normal_distribution<float> nd(0.f, stddev);
  std::vector<uint16_t> host(std::min<size_t>(count, 1 << 22));
  for (auto& h : host) {
    float f = nd(rng);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    h = static_cast<uint16_t>(u >> 16);  // bf16 truncation; as fp16 these are small finite values
    if ((h & 0x7c00) == 0x7c00) h &= 0x83ff;
  }
  for (size_t off = 0; off < count; off += host.size()) {
    size_t n = std::min(host.size(), count - off);
    Api().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(p) + off * 2, host.data(), n * 2);
  }
}

}  // namespace flashjit::bench
