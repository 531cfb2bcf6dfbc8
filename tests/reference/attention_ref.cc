#include "tests/reference/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flashjit::ref {
namespace {

// x rotated by RoPE (rotate halves) at position pos.
std::vector<double> Rope(const double* x, int d, int64_t pos, double rope_scale, double theta) {
  std::vector<double> y(x, x + d);
  for (int i = 0; i < d / 2; ++i) {
    const double freq = std::pow(theta, -2.0 * i / d) / rope_scale;
    const double c = std::cos(pos * freq), s = std::sin(pos * freq);
    y[i] = x[i] * c - x[i + d / 2] * s;
    y[i + d / 2] = x[i + d / 2] * c + x[i] * s;
  }
  return y;
}

}  // namespace

double AlibiSlope(int head, int num_heads) {
  int n = 1;
  while (n * 2 <= num_heads) n *= 2;
  if (head < n) return std::pow(2.0, -8.0 * (head + 1) / n);
  return std::pow(2.0, -4.0 * ((head - n) * 2 + 1) / n);
}

void DecodeAttention(const double* q, const double* k, const double* v, int64_t kv_len,
                     int num_qo_heads, int num_kv_heads, int head_dim, const DecodeRefOptions& o,
                     double* out, double* lse) {
  const int group = num_qo_heads / num_kv_heads, d = head_dim;
  const double scale = (o.sm_scale > 0 ? o.sm_scale : 1.0 / std::sqrt(double(d))) * o.k_scale;
  const int64_t qpos = kv_len - 1;
  const int64_t lo = o.window_left >= 0 ? std::max<int64_t>(0, qpos - o.window_left) : 0;
  std::vector<double> logits(kv_len);
  for (int h = 0; h < num_qo_heads; ++h) {
    const int kh = h / group;
    const std::vector<double> qh =
        o.rope ? Rope(q + int64_t(h) * d, d, qpos, o.rope_scale, o.rope_theta)
               : std::vector<double>(q + int64_t(h) * d, q + int64_t(h + 1) * d);
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = lo; j < kv_len; ++j) {
      const double* kj = k + (j * num_kv_heads + kh) * d;
      const std::vector<double> kr =
          o.rope ? Rope(kj, d, j, o.rope_scale, o.rope_theta) : std::vector<double>(kj, kj + d);
      double dot = 0;
      for (int i = 0; i < d; ++i) dot += qh[i] * kr[i];
      double x = dot * scale;
      if (o.soft_cap > 0) x = o.soft_cap * std::tanh(x / o.soft_cap);
      if (o.alibi) x += AlibiSlope(h, num_qo_heads) * double(j - qpos);
      logits[j] = x;
      mx = std::max(mx, x);
    }
    if (o.sinks) mx = std::max(mx, (*o.sinks)[h]);
    double denom = 0;
    std::vector<double> acc(d, 0.0);
    if (std::isfinite(mx)) {
      for (int64_t j = lo; j < kv_len; ++j) {
        const double w = std::exp(logits[j] - mx);
        denom += w;
        const double* vj = v + (j * num_kv_heads + kh) * d;
        for (int i = 0; i < d; ++i) acc[i] += w * vj[i];
      }
      if (o.sinks) denom += std::exp((*o.sinks)[h] - mx);
    }
    for (int i = 0; i < d; ++i)
      out[int64_t(h) * d + i] = denom > 0 ? acc[i] / denom * o.v_scale : 0;
    lse[h] = denom > 0 ? (mx + std::log(denom)) / std::log(2.0)
                       : -std::numeric_limits<double>::infinity();
  }
}

}  // namespace flashjit::ref
