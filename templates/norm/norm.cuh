// RMSNorm, fused add + RMSNorm and LayerNorm over rows, with fp32 accumulation.
//
// Variant:  DType (activations), WType (weight and bias), kKind (kRms, kFusedAdd, kLayer),
// kThreads (threads per row, a power of two), kRows (rows per group; > 1 only when
// kThreads <= 32), kVec (elements per access), kItems (accesses each thread keeps in registers;
// 0 = stream rows longer than the register tile: two passes, the second mostly from L2),
// kGemma (scale by weight + 1), kStreaming (evict-first hints on activation traffic),
// kPrefetch (load the next row group before reducing the current one), kGridStride (with
// kPrefetch false: run the resident-grid loop below with one block per row instead of
// norm_one_pass), kPrefetchWeights (norm_one_pass only: weights prefetched into L1), kMinBlocks
// (the entry's launch bounds: at least this many blocks per SM; 0 = no minimum).
//
// Without kPrefetch or kGridStride and with rows in registers, each block normalises one row group
// (norm_one_pass.cuh; the host launches one block per group). Otherwise blocks walk over row
// groups g = blockIdx.x, + gridDim.x, ... (a resident grid). With rows in registers and
// kPrefetch, the next group's loads are issued before the current group is reduced and stored,
// and small weights stay in registers across groups: HBM always has loads in flight.
#pragma once

#include "common/pdl.cuh"
#include "common/vec.cuh"
#include "norm/norm_one_pass.cuh"
#include "norm/norm_params.cuh"
#include "norm/norm_row.cuh"
#include "norm/row_sum.cuh"

namespace flashjit::norm {

template <class V>
__device__ void norm_resident(const NormParams& p) {
  using T = typename V::DType;
  using W = typename V::WType;
  constexpr int kThreads = V::kThreads, kVec = V::kVec, kItems = V::kItems;
  constexpr bool kLayerNorm = V::kKind == kLayer;
  static_assert(V::kRows == 1 || kThreads <= 32, "several rows per block need rows <= a warp");
  __shared__ float scratch[32];

  const int lane = threadIdx.x % kThreads, sub = threadIdx.x / kThreads;
  const int64_t groups = (p.rows + V::kRows - 1) / V::kRows;
  const int64_t hidden = p.hidden;  // REQUIRES: hidden % kVec == 0
  const float inv_n = 1.f / static_cast<float>(hidden);
  const W* w = static_cast<const W*>(p.weight);
  const W* b = static_cast<const W*>(p.bias);
  int64_t g = blockIdx.x;
  if (g >= groups) return;  // uniform per block

  if constexpr (kItems > 0) {
    // Weights in registers when they are small (loaded once per block).
    constexpr bool kHoist = kItems * kVec * sizeof(W) * (kLayerNorm ? 2 : 1) <= 64;
    Vec<W, kVec> ws[kHoist ? kItems : 1], bs[kHoist && kLayerNorm ? kItems : 1];
    if constexpr (kHoist) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t col = Col<V>(i, lane);
        if (col < hidden) {
          ws[i] = LoadParam<W, kVec>(w + col);
          if constexpr (kLayerNorm) bs[i] = LoadParam<W, kVec>(b + col);
        }
      }
    }
    RowRef<T> ref = Locate<V>(p, g, sub);
    RowTile<V> cur, next;
    if constexpr (V::kPrefetch) LoadTile<V>(cur, ref, lane, hidden);
    for (; g < groups; g += gridDim.x) {
      // Issue the next group's loads first.                          // (kItems, kVec)
      RowRef<T> next_ref{};
      if constexpr (V::kPrefetch) {
        if (g + gridDim.x < groups) {
          next_ref = Locate<V>(p, g + gridDim.x, sub);
          LoadTile<V>(next, next_ref, lane, hidden);
        }
      } else {
        ref = Locate<V>(p, g, sub);
        LoadTile<V>(cur, ref, lane, hidden);
      }
      float sum = 0.f, sum_sq = 0.f;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t col = Col<V>(i, lane);
        if (ref.active && col < hidden) {
          if constexpr (V::kKind == kFusedAdd) {
            cur.x[i] = AddRounded(cur.x[i], cur.r[i]);
            StoreVecHint<V::kStreaming>(ref.residual + col, cur.x[i]);
          }
          Accumulate(cur.x[i], sum, sum_sq);
        }
      }
      float shift = 0.f, var;
      if constexpr (kLayerNorm) {
        // Exact two-pass variance over the registers.
        shift = RowSum<kThreads>(sum, scratch) * inv_n;
        float dev = 0.f;
#pragma unroll
        for (int i = 0; i < kItems; ++i)
          if (ref.active && Col<V>(i, lane) < hidden) dev += SquaredDeviation(cur.x[i], shift);
        var = RowSum<kThreads>(dev, scratch) * inv_n;
      } else {
        var = RowSum<kThreads>(sum_sq, scratch) * inv_n;
      }
      const float scale = rsqrtf(var + p.eps);
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t col = Col<V>(i, lane);
        if (!ref.active || col >= hidden) continue;
        Vec<W, kVec> wv, bv;
        if constexpr (kHoist) {
          wv = ws[i];
          if constexpr (kLayerNorm) bv = bs[i];
        } else {
          wv = LoadParam<W, kVec>(w + col);
          if constexpr (kLayerNorm) bv = LoadParam<W, kVec>(b + col);
        }
        StoreVecHint<V::kStreaming>(ref.out + col, Normalize<V>(cur.x[i], wv, bv, shift, scale));
      }
      if constexpr (V::kPrefetch) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          cur.x[i] = next.x[i];
          if constexpr (V::kKind == kFusedAdd) cur.r[i] = next.r[i];
        }
        ref = next_ref;
      }
    }
  } else {
    // Streaming: the sums in one pass, then normalise re-reading the row (mostly from L2).
    // LayerNorm takes its variance in a pass of its own over the squared deviations from the
    // mean, as the register path does: E[x^2] - E[x]^2 in fp32 loses the variance of a row whose
    // mean is large against its spread.
    for (; g < groups; g += gridDim.x) {
      const RowRef<T> ref = Locate<V>(p, g, sub);
      float sum = 0.f, sum_sq = 0.f;
      for (int64_t col = lane * kVec; ref.active && col < hidden; col += kThreads * kVec) {
        Vec<T, kVec> v = LoadVecHint<V::kStreaming, T, kVec>(ref.x + col);
        if constexpr (V::kKind == kFusedAdd) {
          v = AddRounded(v, LoadVecHint<V::kStreaming, T, kVec>(ref.residual + col));
          StoreVecHint<V::kStreaming>(ref.residual + col, v);
        }
        Accumulate(v, sum, sum_sq);
      }
      float shift = 0.f, var;
      if constexpr (kLayerNorm) {
        shift = RowSum<kThreads>(sum, scratch) * inv_n;
        float dev = 0.f;
        for (int64_t col = lane * kVec; ref.active && col < hidden; col += kThreads * kVec)
          dev += SquaredDeviation(LoadVec<T, kVec>(ref.x + col), shift);
        var = RowSum<kThreads>(dev, scratch) * inv_n;
      } else {
        var = RowSum<kThreads>(sum_sq, scratch) * inv_n;
      }
      const float scale = rsqrtf(var + p.eps);
      const T* src = V::kKind == kFusedAdd ? ref.residual : ref.x;
      for (int64_t col = lane * kVec; ref.active && col < hidden; col += kThreads * kVec) {
        Vec<W, kVec> wv = LoadParam<W, kVec>(w + col), bv;
        if constexpr (kLayerNorm) bv = LoadParam<W, kVec>(b + col);
        StoreVecHint<V::kStreaming>(
            ref.out + col, Normalize<V>(LoadVec<T, kVec>(src + col), wv, bv, shift, scale));
      }
    }
  }
}

template <class V>
__device__ void norm(const NormParams& p) {
  // PDL (common/pdl.cuh): nothing before the wait, as the in-place forms write what the previous
  // kernel may still read; the next kernel may launch once every CTA is past it.
  GridDependencyWait();
  GridLaunchDependents();
  if constexpr (!V::kPrefetch && !V::kGridStride && V::kItems > 0) {
    norm_one_pass<V>(p);
  } else {
    norm_resident<V>(p);
  }
}

}  // namespace flashjit::norm
