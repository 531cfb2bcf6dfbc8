// Double-precision references for the gated activations.
#pragma once

#include <cstdint>
#include <vector>

namespace flashjit::ref {

enum class Gate { kSilu, kGelu, kGeluTanh };

// out[r, c] = act(x[r, c]) * x[r, d + c] for x [rows, 2d].
std::vector<double> GatedActivation(const std::vector<double>& x, int64_t rows, int64_t d,
                                    Gate gate);

}  // namespace flashjit::ref
