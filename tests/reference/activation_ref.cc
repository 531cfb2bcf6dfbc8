#include "tests/reference/activation_ref.h"

#include <cmath>

namespace flashjit::ref {

std::vector<double> GatedActivation(const std::vector<double>& x, int64_t rows, int64_t d,
                                    Gate gate) {
  std::vector<double> out(rows * d);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < d; ++c) {
      const double g = x[r * 2 * d + c], u = x[r * 2 * d + d + c];
      double a;
      if (gate == Gate::kSilu) {
        a = g / (1 + std::exp(-g));
      } else if (gate == Gate::kGelu) {
        a = 0.5 * g * (1 + std::erf(g / std::sqrt(2.0)));
      } else {
        a = 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g)));
      }
      out[r * d + c] = a * u;
    }
  return out;
}

}  // namespace flashjit::ref
