// What a launch costs, by launch form: host time per enqueue, event-timed time of one call alone
// (host enqueue included, as the benches' "synced" figures), and back-to-back time per call, for
// a trivial kernel of 128 CTAs x 256 threads launched
//   - by cuLaunchKernel, by cuLaunchKernelEx without attributes,
//   - as clusters of 2 and 8 given at launch (cuLaunchKernelEx +
//   CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
//     the form flashjit's runtime uses) or compiled in (`__cluster_dims__`, plain cuLaunchKernel),
//   - with a by-value parameter block of 8 B, 256 B, 1 KB and 4 KB,
//   - through flashjit's runtime::Kernel::Launch (context guard included).
// The kernels are compiled here with NVRTC; a dry run compiles them and times nothing.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/compile/compiler.h"
#include "src/runtime/driver.h"
#include "src/runtime/kernel.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;
using Clock = std::chrono::steady_clock;

namespace {

constexpr unsigned kGrid = 128, kBlock = 256;

// A kernel with a by-value struct of `bytes` (a pointer and padding) as its one parameter.
std::string Source() {
  std::string s = R"(
template <int N> struct Pad { float* p; char pad[N - 8]; };
#define TOUCH(name, T, attr) \
  extern "C" __global__ void attr name(T a) { \
    if (threadIdx.x == 0 && a.p) a.p[blockIdx.x] = 1.f; }
struct P8 { float* p; };
TOUCH(touch8, P8, )
TOUCH(touch256, Pad<256>, )
TOUCH(touch1k, Pad<1024>, )
TOUCH(touch4k, Pad<4096>, )
TOUCH(touch_c2, P8, __cluster_dims__(2, 1, 1))
TOUCH(touch_c8, P8, __cluster_dims__(8, 1, 1))
)";
  return s;
}

const std::vector<std::string> kNames = {"touch8",  "touch256", "touch1k",
                                         "touch4k", "touch_c2", "touch_c8"};

struct Form {
  std::string name;
  std::function<void()> launch;
};

double HostMicros(const std::function<void()>& launch, const runtime::DriverApi* d) {
  std::vector<double> reps;
  for (int rep = 0; rep < 3; ++rep) {
    const int m = 10000;
    bench::CheckDriver(d->cuCtxSynchronize(), "sync");
    auto t0 = Clock::now();
    for (int i = 0; i < m; ++i) {
      launch();
      if (i % 1024 == 1023) {  // keep the queue short: a full queue blocks the enqueue
        auto a = Clock::now();
        bench::CheckDriver(d->cuCtxSynchronize(), "sync");
        t0 += Clock::now() - a;
      }
    }
    auto t1 = Clock::now();
    bench::CheckDriver(d->cuCtxSynchronize(), "sync");
    reps.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / m);
  }
  std::sort(reps.begin(), reps.end());
  return reps[1];
}

}  // namespace

int main(int argc, char** argv) {
  bench::Setup(argc, argv);
  auto inc = compile::FindCudaIncludeDir("");
  if (!inc.ok()) throw std::runtime_error(inc.status().ToString());
  auto cubin = compile::Compile({Source(), "launch_forms", "sm_90a", "bench"}, *inc);
  if (!cubin.ok()) throw std::runtime_error(cubin.status().ToString());
  if (bench::DryRun()) return 0;
  auto kernel = runtime::Kernel::Load(cubin->cubin, kNames, 0, "launch_forms");
  if (!kernel.ok()) throw std::runtime_error(kernel.status().ToString());
  const runtime::Kernel& k = **kernel;
  auto d = *runtime::Driver();
  float* sink = static_cast<float*>(bench::DeviceAlloc(kGrid * sizeof(float)));

  alignas(16) char block[4096] = {};
  std::memcpy(block, &sink, sizeof(sink));
  void* args[] = {block};
  auto plain = [&](int entry) {
    bench::CheckDriver(
        d->cuLaunchKernel(k.function(entry), kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, args, nullptr),
        "cuLaunchKernel");
  };
  auto ex = [&](int entry, unsigned cluster) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster;
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig lc{};
    lc.gridDimX = kGrid;
    lc.gridDimY = lc.gridDimZ = 1;
    lc.blockDimX = kBlock;
    lc.blockDimY = lc.blockDimZ = 1;
    lc.attrs = cluster > 0 ? &attr : nullptr;
    lc.numAttrs = cluster > 0 ? 1 : 0;
    bench::CheckDriver(d->cuLaunchKernelEx(&lc, k.function(entry), args, nullptr),
                       "cuLaunchKernelEx");
  };
  auto runtime_launch = [&](unsigned cluster) {
    runtime::LaunchConfig cfg;
    cfg.grid_x = kGrid;
    cfg.block_x = kBlock;
    cfg.cluster_x = cluster;
    Status s = k.Launch(0, cfg, block, nullptr);
    if (!s.ok()) throw std::runtime_error(s.ToString());
  };

  const std::vector<Form> forms = {
      {"cuLaunchKernel, 8 B params", [&] { plain(0); }},
      {"cuLaunchKernelEx, no attributes", [&] { ex(0, 0); }},
      {"cuLaunchKernelEx, cluster 2 at launch", [&] { ex(0, 2); }},
      {"cuLaunchKernelEx, cluster 8 at launch", [&] { ex(0, 8); }},
      {"cuLaunchKernel, __cluster_dims__(2)", [&] { plain(4); }},
      {"cuLaunchKernel, __cluster_dims__(8)", [&] { plain(5); }},
      {"cuLaunchKernel, 256 B params", [&] { plain(1); }},
      {"cuLaunchKernel, 1 KB params", [&] { plain(2); }},
      {"cuLaunchKernel, 4 KB params", [&] { plain(3); }},
      {"runtime::Kernel::Launch, no cluster", [&] { runtime_launch(1); }},
      {"runtime::Kernel::Launch, cluster 8", [&] { runtime_launch(8); }},
  };
  // Twice, interleaved, so that drift shows as a difference between the two passes.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Form& f : forms) {
      const double host = HostMicros(f.launch, d);
      const double synced = bench::MedianMicros([&](int) { f.launch(); }, 400, 20);
      const double queued = bench::QueuedMicros([&](int) { f.launch(); }, 400, 20);
      const double b2b = bench::BackToBackMicros([&](int) { f.launch(); }, 2000);
      bench::Report("launch", fmt::format("{} (pass {})", f.name, pass + 1), synced, 0, 0,
                    fmt::format(" | host enqueue {:.2f} us | queued {:.2f} us | back-to-back "
                                "{:.2f} us",
                                host, queued, b2b));
    }
  }
  // The queued figure must not depend on how long the spin in front of the call lasts, once it
  // outlasts the host's enqueue: the same call behind spins of 10 us to 1 ms.
  for (int spin_us : {10, 30, 100, 1000}) {
    setenv("FLASHJIT_BENCH_SPIN_US", std::to_string(spin_us).c_str(), 1);
    const double queued = bench::QueuedMicros([&](int) { plain(0); }, 400, 20);
    bench::Report("launch", fmt::format("queued behind a {} us spin, cuLaunchKernel", spin_us),
                  queued, 0, 0, "");
  }
  unsetenv("FLASHJIT_BENCH_SPIN_US");
  return 0;
}
