// Helpers shared by the sampling GPU tests.
#pragma once

#include <flashjit/sampling.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/gpu/gpu_test_util.h"

namespace flashjit::test {

template <class T>
DeviceBuffer UploadVector(const std::vector<T>& v) {
  DeviceBuffer b(v.size() * sizeof(T));
  b.Upload(v.data(), v.size() * sizeof(T));
  return b;
}

template <class T>
std::vector<T> DownloadVector(const DeviceBuffer& b, size_t count) {
  std::vector<T> v(count);
  b.Download(v.data(), count * sizeof(T));
  return v;
}

// A probability row: softmax of normal logits with `stddev`, normalised in float.
inline std::vector<float> RandomProbs(int64_t vocab, std::mt19937& rng, float stddev) {
  std::vector<float> logits = RandomNormal(vocab, rng, stddev);
  std::vector<float> p(vocab);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i) sum += (p[i] = std::exp(logits[i]));
  for (float& x : p) x = static_cast<float>(x / sum);
  return p;
}

// Chi-square bound at about 6 standard deviations: fails by chance with probability < 1e-8.
inline double ChiSquareBound(int dof) { return dof + 6.0 * std::sqrt(2.0 * dof) + 10.0; }

}  // namespace flashjit::test
