// Host-side fp16 / bf16 / fp8 conversions for tests (round to nearest even), independent of
// the CUDA headers.
#pragma once

#include <flashjit/tensor.h>

#include <cstdint>

namespace flashjit::ref {

uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t b);
uint16_t FloatToF16(float f);
float F16ToFloat(uint16_t h);

// Converts `f` to `dtype`'s 16-bit pattern (kF16 or kBF16), and back.
uint16_t FloatTo16(DType dtype, float f);
float From16(DType dtype, uint16_t bits);
// Rounds through `dtype` (what the device sees after an upload).
inline float Round16(DType dtype, float f) { return From16(dtype, FloatTo16(dtype, f)); }

}  // namespace flashjit::ref
