// Double-precision references for rotary position embedding.
#pragma once

#include <cstdint>
#include <vector>

namespace flashjit::ref {

// freq_i = 1 / (scale * theta^(2i / rotary_dim)), i < rotary_dim / 2.
std::vector<double> RopeFreqs(int64_t rotary_dim, double scale, double theta);

// Llama 3.1 (Meta's definition): f = theta^(-2i / rotary_dim), wavelen = 2 pi / f;
// wavelen < old / high: f; wavelen > old / low: f / scale; else smooth = (old / wavelen - low) /
// (high - low), (1 - smooth) f / scale + smooth f.
std::vector<double> Llama31Freqs(int64_t rotary_dim, double scale, double theta, double low,
                                 double high, double old_context_len);

// Rotates one head x[head_dim] at angle pos * freqs[i] (or with the given cos/sin per i):
// NeoX pairs (i, i + rotary_dim / 2) or interleaved pairs (2i, 2i + 1); the rest is copied.
std::vector<double> RotateHead(const std::vector<double>& x, const std::vector<double>& cos,
                               const std::vector<double>& sin, int64_t rotary_dim, bool interleave);

}  // namespace flashjit::ref
