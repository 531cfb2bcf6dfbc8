#include "tests/reference/norm_ref.h"

#include <cmath>

namespace flashjit::ref {

std::vector<double> RmsNorm(const std::vector<double>& x, const std::vector<double>& w,
                            int64_t rows, int64_t hidden, double eps, bool gemma) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < hidden; ++c) ss += x[r * hidden + c] * x[r * hidden + c];
    const double inv = 1.0 / std::sqrt(ss / hidden + eps);
    for (int64_t c = 0; c < hidden; ++c)
      out[r * hidden + c] = x[r * hidden + c] * inv * (w[c] + (gemma ? 1.0 : 0.0));
  }
  return out;
}

}  // namespace flashjit::ref

namespace flashjit::ref {

std::vector<double> LayerNorm(const std::vector<double>& x, const std::vector<double>& gamma,
                              const std::vector<double>& beta, int64_t rows, int64_t hidden,
                              double eps) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = &x[r * hidden];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < hidden; ++c) mean += row[c];
    mean /= hidden;
    for (int64_t c = 0; c < hidden; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= hidden;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < hidden; ++c)
      out[r * hidden + c] = (row[c] - mean) * inv * gamma[c] + beta[c];
  }
  return out;
}

}  // namespace flashjit::ref
