// Sum over the threads that share one row: a sub-warp (kThreads <= 32, several rows per warp)
// or the whole block (one row per block).
#pragma once

#include "common/reduce.cuh"

namespace flashjit::norm {

// REQUIRES: every thread of the warp (kThreads <= 32) or block (kThreads > 32) calls this;
// kThreads a power of two; `scratch` holds 32 floats.
template <int kThreads>
FLASHJIT_DEVICE float RowSum(float x, float* scratch) {
  static_assert((kThreads & (kThreads - 1)) == 0, "threads per row must be a power of two");
  if constexpr (kThreads <= 32) {
#pragma unroll
    for (int o = kThreads / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
  } else {
    return BlockSum<kThreads>(x, scratch);
  }
}

}  // namespace flashjit::norm
