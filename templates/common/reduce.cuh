// Warp and block reductions over float.
#pragma once

#include "common/config.cuh"

namespace flashjit {

FLASHJIT_DEVICE float WarpSum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

FLASHJIT_DEVICE float WarpMax(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

// Sum over the whole block; every thread gets the result.
// REQUIRES: blockDim.x == kThreads, kThreads a multiple of 32, `scratch` holds 32 floats.
template <int kThreads>
FLASHJIT_DEVICE float BlockSum(float x, float* scratch) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block size must be a multiple of 32");
  constexpr int kWarps = kThreads / 32;
  x = WarpSum(x);
  if constexpr (kWarps == 1) {
    return x;
  } else {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read from a previous call
    if (lane == 0) scratch[warp] = x;
    __syncthreads();
    x = lane < kWarps ? scratch[lane] : 0.f;
    return WarpSum(x);
  }
}

}  // namespace flashjit
