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

#include "common/cluster_sm90.cuh"
#include "common/hint_io.cuh"
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

// Activation traffic of the one-pass kernel: the cache hints of V::kLoadHint / kStoreHint
// (common/hint_io.cuh); hint 0 keeps the streaming flag's choice (.cs or none).
template <class V, class T, int N>
FLASHJIT_DEVICE Vec<T, N> LoadAct(const T* p) {
  if constexpr (V::kLoadHint == 0) {
    return LoadVecHint<V::kStreaming, T, N>(p);
  } else {
    return LoadVecH<V::kLoadHint, T, N>(p);
  }
}

template <class V, class T, int N>
FLASHJIT_DEVICE void StoreAct(T* p, const Vec<T, N>& v) {
  if constexpr (V::kStoreHint == 0) {
    StoreVecHint<V::kStreaming>(p, v);
  } else {
    StoreVecH<V::kStoreHint>(p, v);
  }
}

// Diagnostic (kDiag 3, bench only): a flat copy of x to out (rows contiguous) over a resident
// grid, tiles of kThreads * kItems accesses taken grid-stride: the same bytes as the norm, moved
// by a kernel of ours with no row structure.
template <class V>
__device__ void norm_flat_copy(const NormParams& p) {
  using T = typename V::DType;
  constexpr int kThreads = V::kThreads * V::kRows, kVec = V::kVec, kItems = V::kItems;
  constexpr int kTile = kThreads * kItems;
  const int64_t total = p.rows * p.hidden / kVec;  // REQUIRES: contiguous rows, hidden % kVec == 0
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  for (int64_t t = blockIdx.x; t * kTile < total; t += gridDim.x) {
    const int64_t base = t * kTile + threadIdx.x;
    Vec<T, kVec> v[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (base + i * kThreads < total) v[i] = LoadAct<V, T, kVec>(x + (base + i * kThreads) * kVec);
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (base + i * kThreads < total) StoreAct<V>(out + (base + i * kThreads) * kVec, v[i]);
  }
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
  // kSplit: a cluster of two blocks per row; block 0 takes the first `head` elements (half the
  // row's accesses, rounded up), block 1 the rest. REQUIRES: hidden % kVec == 0 and head <=
  // kItems * kThreads * kVec. Else REQUIRES: hidden % kVec == 0 and hidden <= kItems * kThreads *
  // kVec (the row fits).
  const int rank = V::kSplit ? static_cast<int>(ClusterCtaRank()) : 0;
  const int hidden = static_cast<int>(p.hidden);
  const int head = V::kSplit ? (hidden / kVec + 1) / 2 * kVec : hidden;
  const int span = rank ? hidden - head : head;
  const RowRef<T> ref = Locate<V>(p, V::kSplit ? blockIdx.x / 2 : blockIdx.x, sub);

  // Thread-relative bases; access i sits i * kStride elements further (an immediate offset).
  constexpr int kStride = kThreads * kVec;
  const int first = lane * kVec + rank * head;
  const T* xp = ref.x + first;
  T* rp = kFused ? ref.residual + first : nullptr;
  T* op = ref.out + first;
  const W* wp = static_cast<const W*>(p.weight) + first;
  const W* bp = kLayerNorm ? static_cast<const W*>(p.bias) + first : nullptr;
  // Elements of the block's span from this thread's first one on; access i is inside when
  // i * kStride < valid.
  const int valid = ref.active ? span - lane * kVec : 0;

  Vec<T, kVec> x[kItems];  // (kItems, kVec) per thread
  if constexpr (kFused) {
    Vec<T, kVec> r[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (i * kStride < valid) {
        x[i] = LoadAct<V, T, kVec>(xp + i * kStride);
        r[i] = LoadAct<V, T, kVec>(rp + i * kStride);
      }
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (i * kStride < valid) {
        x[i] = AddRounded(x[i], r[i]);
        StoreAct<V>(rp + i * kStride, x[i]);
        KeepPacked(x[i]);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (i * kStride < valid) x[i] = LoadAct<V, T, kVec>(xp + i * kStride);
  }
  if constexpr (V::kDiag == 1 || V::kDiag == 2) {
    // Diagnostic (bench only): out = x with this kernel's block structure, without the
    // reduction: all loads, the one barrier (kDiag 1; none with 2), all stores.
    if constexpr (V::kDiag == 1) __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (i * kStride < valid) StoreAct<V>(op + i * kStride, x[i]);
    return;
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
  } else if constexpr (V::kSplit) {
    // The two halves' sums meet in both blocks' `part` (own half locally, the other's through
    // distributed shared memory); the cluster barrier publishes them and keeps both blocks alive
    // across the remote store. Both blocks add part[0] + part[1]: the same scale.
    __shared__ float part[2];
    const float half_sum = RowSumOnce<kThreads>(sum_sq, slots[0]);
    if (threadIdx.x == 0) {
      part[rank] = half_sum;
      StSharedClusterU32(MapaSharedCluster(&part[rank], rank ^ 1), __float_as_uint(half_sum));
    }
    ClusterSync();
    var = (part[0] + part[1]) * inv_n;
  } else {
    var = RowSumOnce<kThreads>(sum_sq, slots[0]) * inv_n;
  }
  const float scale = rsqrtf(var + p.eps);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (i * kStride >= valid) continue;
    Vec<W, kVec> wv = LoadParam<W, kVec>(wp + i * kStride), bv;
    if constexpr (kLayerNorm) bv = LoadParam<W, kVec>(bp + i * kStride);
    StoreAct<V>(op + i * kStride, Normalize<V>(x[i], wv, bv, shift, scale));
  }
}

}  // namespace flashjit::norm
