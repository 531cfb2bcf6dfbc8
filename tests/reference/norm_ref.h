// Double-precision references for the normalization ops.
#pragma once

#include <cstdint>
#include <vector>

namespace flashjit::ref {

// out[r, c] = x[r, c] / sqrt(mean(x[r, :]^2) + eps) * (w[c] + (gemma ? 1 : 0))
std::vector<double> RmsNorm(const std::vector<double>& x, const std::vector<double>& w,
                            int64_t rows, int64_t hidden, double eps, bool gemma);

// out[r, c] = (x[r, c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c], biased variance.
std::vector<double> LayerNorm(const std::vector<double>& x, const std::vector<double>& gamma,
                              const std::vector<double>& beta, int64_t rows, int64_t hidden,
                              double eps);

}  // namespace flashjit::ref
