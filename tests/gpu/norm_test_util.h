// Helpers shared by the normalization GPU tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace flashjit::test {

// The largest relative L2 error of any one row (||got_r - ref_r|| / ||ref_r||; rows whose
// reference is all zero compare by the absolute norm). A single wrong row in a 16k-row tensor
// hides in the tensor-wide figure; here it does not. NaN in `got` gives NaN, which fails any
// `<` check.
inline double WorstRowRelL2(const std::vector<float>& got, const std::vector<double>& ref,
                            int64_t rows, int64_t hidden) {
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double err = 0, norm = 0;
    for (int64_t c = 0; c < hidden; ++c) {
      const double d = got[r * hidden + c] - ref[r * hidden + c];
      err += d * d;
      norm += ref[r * hidden + c] * ref[r * hidden + c];
    }
    const double rel = norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
    if (std::isnan(rel)) return rel;
    worst = std::max(worst, rel);
  }
  return worst;
}

}  // namespace flashjit::test
