// Block-wide reductions and scans the sampling kernels need beyond common/reduce.cuh.
// Every function is called by all threads of the block; every thread gets the result.
#pragma once

#include "common/reduce.cuh"

namespace flashjit::sampling {

// Scratch for one block operation: 32 slots of 8 bytes.
struct BlockScratch {
  double d[32];
};

template <int kThreads, class T, class Op>
FLASHJIT_DEVICE T BlockReduce(T x, BlockScratch& s, Op op) {
  constexpr int kWarps = kThreads / 32;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
  if constexpr (kWarps == 1) {
    return x;
  } else {
    T* slots = reinterpret_cast<T*>(s.d);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) slots[warp] = x;
    __syncthreads();
    // Lanes past the last warp repeat slot 0 (harmless for min/max) or add nothing.
    x = lane < kWarps ? slots[lane] : (Op::kIdempotent ? slots[0] : T(0));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
  }
}

struct OpAdd {
  static constexpr bool kIdempotent = false;
  template <class T>
  FLASHJIT_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};
struct OpMax {
  static constexpr bool kIdempotent = true;
  template <class T>
  FLASHJIT_DEVICE T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
struct OpMin {
  static constexpr bool kIdempotent = true;
  template <class T>
  FLASHJIT_DEVICE T operator()(T a, T b) const {
    return a < b ? a : b;
  }
};

// Inclusive prefix sum over threads in threadIdx order; *total receives the block sum.
template <int kThreads, class T>
FLASHJIT_DEVICE T BlockInclusiveScan(T x, BlockScratch& s, T* total) {
  constexpr int kWarps = kThreads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    T y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if constexpr (kWarps == 1) {
    *total = __shfl_sync(0xffffffffu, x, 31);
    return x;
  } else {
    T* slots = reinterpret_cast<T*>(s.d);
    __syncthreads();
    if (lane == 31) slots[warp] = x;
    __syncthreads();
    T w = lane < kWarps ? slots[lane] : T(0);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      T y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    // w (lane i) = sum of warps 0..i
    const T before = warp > 0 ? __shfl_sync(0xffffffffu, w, warp - 1) : T(0);
    *total = __shfl_sync(0xffffffffu, w, kWarps - 1);
    return x + before;
  }
}

}  // namespace flashjit::sampling
