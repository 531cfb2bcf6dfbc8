// Host-side fp8 formats (OCP e4m3fn and e5m2) for the paged-cache tests, written from the
// format definitions: round to nearest, ties to even, saturating to the largest finite value.
#pragma once

#include <flashjit/tensor.h>

#include <cstdint>

namespace flashjit::ref {

// REQUIRES: dtype kF8E4M3 or kF8E5M2.
double Fp8ToDouble(DType dtype, uint8_t bits);
uint8_t DoubleToFp8Saturate(DType dtype, double x);

}  // namespace flashjit::ref
