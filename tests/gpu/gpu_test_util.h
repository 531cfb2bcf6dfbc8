// Helpers for the GPU tests: one engine, device buffers, random data, error metrics.
//
// Under FLASHJIT_DRY_RUN=1 (with FLASHJIT_ARCH) the same tests run on a machine with no GPU:
// buffers live in host memory, ops build their kernels into the cache without launching, and
// result checks are skipped. tools/gpu-test.sh uses this to prewarm the cache.
#pragma once

#include <cuda.h>
#include <flashjit/engine.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace flashjit::test {

Engine& TestEngine();
bool DryRun();

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void Upload(const void* host, size_t bytes, size_t offset = 0);
  void Download(void* host, size_t bytes, size_t offset = 0) const;
  void Fill(uint8_t byte);  // 0xFF poisons fp16/bf16/fp32 with NaN

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

void Synchronize();

// A CUDA graph of what one enqueue puts on a stream of its own, for the graph-replay tests. Owns
// the stream, the graph and its executable and frees them however the test ends (a failed
// REQUIRE throws). Driver errors throw. Not for DryRun(): it needs a GPU.
class CapturedGraph {
 public:
  // Creates the capture stream: non-blocking, or a blocking one that the null stream orders.
  explicit CapturedGraph(bool blocking = false);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  CUstream stream() const { return stream_; }

  // Captures what `enqueue` puts on stream() (CU_STREAM_CAPTURE_MODE_GLOBAL when `global`, else
  // thread-local) and returns enqueue's Status; the graph is instantiated only when it is ok.
  // REQUIRES: called once.
  Status Capture(const std::function<Status(CUstream)>& enqueue, bool global = false);

  // Launches the instantiated graph on stream() and waits for it.
  // REQUIRES: a Capture that returned ok.
  void Replay() const;

 private:
  CUstream stream_ = nullptr;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

// 16-bit tensors on the device from float values (rounded to `dtype`); `rounded` receives
// what the device holds, as double, for the reference.
DeviceBuffer Upload16(DType dtype, const std::vector<float>& values, std::vector<double>* rounded);
std::vector<float> Download16(DType dtype, const DeviceBuffer& buf, size_t count);

std::vector<float> RandomNormal(size_t n, std::mt19937& rng, float stddev = 1.f, float mean = 0.f);
std::vector<float> RandomUniform(size_t n, std::mt19937& rng, float lo, float hi);

struct ErrorStats {
  double rel_l2 = 0;  // ||got - ref|| / ||ref||
  double max_abs = 0;
  int64_t non_finite = 0;  // NaN/inf in got where ref is finite (unwritten poison shows here)
  std::string ToString() const;
};
ErrorStats Compare(const std::vector<float>& got, const std::vector<double>& ref);

// A fresh seed per run (logged), or FLASHJIT_TEST_SEED to reproduce.
uint32_t Seed();

// Values in [-scale, scale) from a 64-bit xorshift seeded by `rng`: for the large (16k-token)
// cases, where std::normal_distribution would dominate the run time.
std::vector<float> FastRandom(int64_t n, std::mt19937& rng, float scale);

}  // namespace flashjit::test
