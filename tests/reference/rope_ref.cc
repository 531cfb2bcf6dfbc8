#include "tests/reference/rope_ref.h"

#include <cmath>

namespace flashjit::ref {

std::vector<double> RopeFreqs(int64_t rotary_dim, double scale, double theta) {
  std::vector<double> f(rotary_dim / 2);
  for (int64_t i = 0; i < rotary_dim / 2; ++i)
    f[i] = 1.0 / (scale * std::pow(theta, 2.0 * i / rotary_dim));
  return f;
}

std::vector<double> Llama31Freqs(int64_t rotary_dim, double scale, double theta, double low,
                                 double high, double old_context_len) {
  std::vector<double> f = RopeFreqs(rotary_dim, 1.0, theta);
  const double low_wavelen = old_context_len / low, high_wavelen = old_context_len / high;
  for (double& x : f) {
    const double wavelen = 2 * M_PI / x;
    if (wavelen < high_wavelen) continue;
    if (wavelen > low_wavelen) {
      x /= scale;
      continue;
    }
    const double smooth = (old_context_len / wavelen - low) / (high - low);
    x = (1 - smooth) * x / scale + smooth * x;
  }
  return f;
}

std::vector<double> RotateHead(const std::vector<double>& x, const std::vector<double>& cos,
                               const std::vector<double>& sin, int64_t rotary_dim,
                               bool interleave) {
  std::vector<double> out = x;
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleave ? 2 * i : i, b = interleave ? 2 * i + 1 : i + half;
    out[a] = x[a] * cos[i] - x[b] * sin[i];
    out[b] = x[b] * cos[i] + x[a] * sin[i];
  }
  return out;
}

}  // namespace flashjit::ref
