// Helpers for the GPU tests: one engine, device buffers, random data, error metrics.
//
// Under FLASHJIT_DRY_RUN=1 (with FLASHJIT_ARCH) the same tests run on a machine with no GPU:
// buffers live in host memory, ops build their kernels into the cache without launching, and
// result checks are skipped. tools/gpu-test.sh uses this to prewarm the cache.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/tensor.h>

#include <cstdint>
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
