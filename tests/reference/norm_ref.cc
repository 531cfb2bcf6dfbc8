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
