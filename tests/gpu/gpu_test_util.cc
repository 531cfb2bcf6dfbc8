#include "tests/gpu/gpu_test_util.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "src/runtime/driver.h"
#include "tests/reference/half.h"

namespace flashjit::test {
namespace {

const runtime::DriverApi& Api() {
  auto d = runtime::Driver();
  if (!d.ok()) throw std::runtime_error(d.status().ToString());
  runtime::PrimaryContext(0);
  return **d;
}

void Check(CUresult rc, const char* what) {
  if (rc != CUDA_SUCCESS) throw std::runtime_error(runtime::CudaStatus(rc, what).ToString());
}

}  // namespace

CapturedGraph::CapturedGraph(bool blocking) {
  Check(Api().cuStreamCreate(&stream_, blocking ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING),
        "cuStreamCreate");
}

CapturedGraph::~CapturedGraph() {
  const runtime::DriverApi& api = Api();
  if (exec_ != nullptr) api.cuGraphExecDestroy(exec_);
  if (graph_ != nullptr) api.cuGraphDestroy(graph_);
  if (stream_ != nullptr) api.cuStreamDestroy(stream_);
}

Status CapturedGraph::Capture(const std::function<Status(CUstream)>& enqueue, bool global) {
  if (graph_ != nullptr) throw std::logic_error("CapturedGraph::Capture called twice");
  const runtime::DriverApi& api = Api();
  Check(api.cuStreamBeginCapture(
            stream_, global ? CU_STREAM_CAPTURE_MODE_GLOBAL : CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        "cuStreamBeginCapture");
  Status enqueued = Status::Ok();
  try {
    enqueued = enqueue(stream_);
  } catch (...) {
    // End the capture so that the stream is usable (and destroyable) again.
    CUgraph partial = nullptr;
    if (api.cuStreamEndCapture(stream_, &partial) == CUDA_SUCCESS && partial != nullptr)
      api.cuGraphDestroy(partial);
    throw;
  }
  Check(api.cuStreamEndCapture(stream_, &graph_), "cuStreamEndCapture");
  if (enqueued.ok()) Check(api.cuGraphInstantiate(&exec_, graph_, 0), "cuGraphInstantiate");
  return enqueued;
}

void CapturedGraph::Replay() const {
  if (exec_ == nullptr) throw std::logic_error("CapturedGraph::Replay before a successful Capture");
  const runtime::DriverApi& api = Api();
  Check(api.cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
  Check(api.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

bool DryRun() {
  static const bool kDry = [] {
    const char* v = std::getenv("FLASHJIT_DRY_RUN");
    return v && std::string(v) == "1";
  }();
  return kDry;
}

Engine& TestEngine() {
  static std::shared_ptr<Engine> engine = [] {
    auto e = Engine::Create();
    if (!e.ok()) throw std::runtime_error(e.status().ToString());
    return *e;
  }();
  return *engine;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  size_t n = bytes ? bytes : 1;
  if (DryRun()) {
    ptr_ = std::aligned_alloc(256, (n + 255) / 256 * 256);
    return;
  }
  CUdeviceptr p;
  Check(Api().cuMemAlloc(&p, n), "cuMemAlloc");
  ptr_ = reinterpret_cast<void*>(p);
}

DeviceBuffer::~DeviceBuffer() {
  if (!ptr_) return;
  if (DryRun()) {
    std::free(ptr_);
  } else {
    Api().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr_));
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

void DeviceBuffer::Upload(const void* host, size_t bytes, size_t offset) {
  if (DryRun()) {
    std::memcpy(static_cast<char*>(ptr_) + offset, host, bytes);
    return;
  }
  Check(Api().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(ptr_) + offset, host, bytes),
        "cuMemcpyHtoD");
}

void DeviceBuffer::Download(void* host, size_t bytes, size_t offset) const {
  if (DryRun()) {
    std::memcpy(host, static_cast<char*>(ptr_) + offset, bytes);
    return;
  }
  Check(Api().cuMemcpyDtoH(host, reinterpret_cast<CUdeviceptr>(ptr_) + offset, bytes),
        "cuMemcpyDtoH");
}

void DeviceBuffer::Fill(uint8_t byte) {
  if (DryRun()) {
    std::memset(ptr_, byte, bytes_);
    return;
  }
  Check(Api().cuMemsetD8(reinterpret_cast<CUdeviceptr>(ptr_), byte, bytes_), "cuMemsetD8");
}

void Synchronize() {
  if (DryRun()) return;
  Check(Api().cuCtxSynchronize(), "cuCtxSynchronize (a kernel failed?)");
}

DeviceBuffer Upload16(DType dtype, const std::vector<float>& values, std::vector<double>* rounded) {
  std::vector<uint16_t> bits(values.size());
  if (rounded) rounded->resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = ref::FloatTo16(dtype, values[i]);
    if (rounded) (*rounded)[i] = ref::From16(dtype, bits[i]);
  }
  DeviceBuffer buf(bits.size() * 2);
  buf.Upload(bits.data(), bits.size() * 2);
  return buf;
}

std::vector<float> Download16(DType dtype, const DeviceBuffer& buf, size_t count) {
  std::vector<uint16_t> bits(count);
  buf.Download(bits.data(), count * 2);
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = ref::From16(dtype, bits[i]);
  return out;
}

std::vector<float> RandomNormal(size_t n, std::mt19937& rng, float stddev, float mean) {
  std::normal_distribution<float> d(mean, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<float> RandomUniform(size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::string ErrorStats::ToString() const {
  return fmt::format("rel_l2 {:.3g} max_abs {:.3g} non_finite {}", rel_l2, max_abs, non_finite);
}

ErrorStats Compare(const std::vector<float>& got, const std::vector<double>& ref) {
  ErrorStats s;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i]) && std::isfinite(ref[i])) {
      ++s.non_finite;
      continue;
    }
    if (!std::isfinite(ref[i])) continue;
    double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
    s.max_abs = std::max(s.max_abs, std::abs(d));
  }
  s.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return s;
}

uint32_t Seed() {
  static const uint32_t kSeed = [] {
    if (const char* v = std::getenv("FLASHJIT_TEST_SEED"))
      return static_cast<uint32_t>(std::stoul(v));
    auto s = static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    fmt::print("GPU tests: seed {} (FLASHJIT_TEST_SEED to reproduce)\n", s);
    return s;
  }();
  return kSeed;
}

std::vector<float> FastRandom(int64_t n, std::mt19937& rng, float scale) {
  uint64_t s = (static_cast<uint64_t>(rng()) << 32) | rng() | 1;
  std::vector<float> v(n);
  for (float& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = scale * (static_cast<float>(s >> 40) * 0x1p-23f - 1.f);
  }
  return v;
}

}  // namespace flashjit::test
