// IEEE special values for device code (NVRTC has no <limits>).
#pragma once

#include "common/config.cuh"

namespace flashjit {

#if FLASHJIT_HAS_DEVICE
FLASHJIT_DEVICE float Infinity() { return __int_as_float(0x7f800000); }
FLASHJIT_DEVICE float NegInf() { return -__int_as_float(0x7f800000); }
FLASHJIT_DEVICE float QuietNaN() { return __int_as_float(0x7fc00000); }
#endif

}  // namespace flashjit
