// One row group per block, the row held in registers: the path for kPrefetch = false with
// kItems > 0 (grid = number of row groups; the host launches one block per group).
//
// Each thread issues all kItems 16-byte loads of its share of the row at once (and of the
// residual), reduces, and writes each element once. Nothing loops over groups and nothing is
// kept for a next row, so the register count stays low and many blocks fit on an SM (the bytes
// in flight per SM come from resident blocks, not from per-thread prefetch). With
// kPrefetchWeights the weights (and bias) are prefetched into L1 before the reduction, so that
// their loads after it hit L1 without holding registers across the reduction.
#pragma once

#include "common/reduce.cuh"
#include "common/vec.cuh"
#include "norm/norm_params.cuh"
#include "norm/norm_row.cuh"
#include "norm/row_sum.cuh"

namespace flashjit::norm {

// Sum over the threads of one row, used once per block: a sub-warp (kThreads <= 32) reduces
// with shuffles; a whole block goes through `slots` (kThreads / 32 floats) with one barrier.
// REQUIRES: every thread of the block calls this; each call site passes its own `slots`.
template <int kThreads>
FLASHJIT_DEVICE float RowSumOnce(float x, float* slots) {
  if constexpr (kThreads <= 32) {
    return RowSum<kThreads>(x, slots);  // shuffles only
  } else {
    constexpr int kWarps = kThreads / 32;
    x = WarpSum(x);
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = x;
    __syncthreads();
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) s += slots[i];  // same order in every thread
    return s;
  }
}

// Hides the value of `v` from the optimiser, so that the floats converted from it for the sum
// are not kept alive across the reduction (twice the registers of the packed 16-bit values);
// they are converted again, cheaply, for the output.
template <class T, int N>
FLASHJIT_DEVICE void KeepPacked(Vec<T, N>& v) {
  if constexpr (sizeof(v) % 4 == 0) {
    uint32_t* u = reinterpret_cast<uint32_t*>(&v);
#pragma unroll
    for (int j = 0; j < static_cast<int>(sizeof(v) / 4); ++j) asm volatile("" : "+r"(u[j]));
  } else {
    uint16_t* u = reinterpret_cast<uint16_t*>(&v);
    asm volatile("" : "+h"(u[0]));
  }
}

FLASHJIT_DEVICE void PrefetchL1(const void* p) {
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
}

template <class V>
__device__ void norm_one_pass(const NormParams& p) {
  using T = typename V::DType;
  using W = typename V::WType;
  constexpr int kThreads = V::kThreads, kVec = V::kVec, kItems = V::kItems;
  constexpr bool kFused = V::kKind == kFusedAdd, kLayerNorm = V::kKind == kLayer;
  constexpr int kSlots = kThreads > 32 ? kThreads / 32 : 1;
  __shared__ float slots[kLayerNorm ? 2 : 1][kSlots];

  const int lane = threadIdx.x % kThreads, sub = threadIdx.x / kThreads;
  // REQUIRES: hidden % kVec == 0 and hidden <= kItems * kThreads * kVec (the row fits).
  const RowRef<T> ref = Locate<V>(p, blockIdx.x, sub);

  // Thread-relative bases; access i sits i * kStride elements further (an immediate offset).
  constexpr int kStride = kThreads * kVec;
  const int first = lane * kVec;
  const T* xp = ref.x + first;
  T* rp = kFused ? ref.residual + first : nullptr;
  T* op = ref.out + first;
  const W* wp = static_cast<const W*>(p.weight) + first;
  const W* bp = kLayerNorm ? static_cast<const W*>(p.bias) + first : nullptr;
  // Elements of the row from this thread's first one on; access i is inside when i * kStride <
  // valid.
  const int valid = ref.active ? static_cast<int>(p.hidden) - first : 0;

  Vec<T, kVec> x[kItems];  // (kItems, kVec) per thread
  if constexpr (kFused) {
    Vec<T, kVec> r[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (i * kStride < valid) {
        x[i] = LoadVecHint<V::kStreaming, T, kVec>(xp + i * kStride);
        r[i] = LoadVecHint<V::kStreaming, T, kVec>(rp + i * kStride);
      }
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (i * kStride < valid) {
        x[i] = AddRounded(x[i], r[i]);
        StoreVecHint<V::kStreaming>(rp + i * kStride, x[i]);
        KeepPacked(x[i]);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (i * kStride < valid) x[i] = LoadVecHint<V::kStreaming, T, kVec>(xp + i * kStride);
  }
  if constexpr (V::kPrefetchWeights) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (i * kStride < valid) {
        PrefetchL1(wp + i * kStride);
        if constexpr (kLayerNorm) PrefetchL1(bp + i * kStride);
      }
    }
  }

  const float inv_n = 1.f / static_cast<float>(p.hidden);
  float sum = 0.f, sum_sq = 0.f;
#pragma unroll
  for (int i = 0; i < kItems; ++i)
    if (i * kStride < valid) Accumulate(x[i], sum, sum_sq);
#pragma unroll
  for (int i = 0; i < kItems; ++i) KeepPacked(x[i]);
  float shift = 0.f, var;
  if constexpr (kLayerNorm) {
    // Exact two-pass variance over the registers (two reductions, separate slots).
    shift = RowSumOnce<kThreads>(sum, slots[0]) * inv_n;
    float dev = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (i * kStride < valid) dev += SquaredDeviation(x[i], shift);
    var = RowSumOnce<kThreads>(dev, slots[kLayerNorm ? 1 : 0]) * inv_n;
  } else {
    var = RowSumOnce<kThreads>(sum_sq, slots[0]) * inv_n;
  }
  const float scale = rsqrtf(var + p.eps);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (i * kStride >= valid) continue;
    Vec<W, kVec> wv = LoadParam<W, kVec>(wp + i * kStride), bv;
    if constexpr (kLayerNorm) bv = LoadParam<W, kVec>(bp + i * kStride);
    StoreVecHint<V::kStreaming>(op + i * kStride, Normalize<V>(x[i], wv, bv, shift, scale));
  }
}

}  // namespace flashjit::norm
