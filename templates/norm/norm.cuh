// RMSNorm, fused add + RMSNorm and LayerNorm over rows, with fp32 accumulation.
//
// Variant:  DType (activations), WType (weight and bias), kKind (kRms, kFusedAdd, kLayer),
// kThreads (threads per row, a power of two), kRows (rows per block; > 1 only when
// kThreads <= 32), kVec (elements per access), kItems (accesses each thread keeps in registers;
// 0 = stream rows longer than the register tile: two passes, the second mostly from L2),
// kGemma (scale by weight + 1), kStreaming (evict-first hints on activation traffic).
#pragma once

#include "common/vec.cuh"
#include "norm/norm_params.cuh"
#include "norm/row_sum.cuh"

namespace flashjit::norm {

enum NormKind : int { kRms = 0, kFusedAdd = 1, kLayer = 2 };

template <class T>
FLASHJIT_DEVICE T* RowPtr(const void* base, int token, int head, const NormRowLayout& l) {
  return const_cast<T*>(static_cast<const T*>(base)) + token * l.stride_token +
         head * l.stride_head;
}

// out = (v - shift) * scale * (w + gemma) + b, for one access of kVec elements.
template <class V, class T, class W>
FLASHJIT_DEVICE Vec<T, V::kVec> Normalize(const Vec<T, V::kVec>& v, const W* w, const W* b,
                                          int64_t col, float shift, float scale) {
  constexpr int kVec = V::kVec;
  const float gemma = V::kGemma ? 1.f : 0.f;
  Vec<W, kVec> ws = LoadVec<W, kVec>(w + col), bs;
  if constexpr (V::kKind == kLayer) bs = LoadVec<W, kVec>(b + col);
  Vec<T, kVec> o;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    float y = (ToFloat(v.v[j]) - shift) * scale * (ToFloat(ws.v[j]) + gemma);
    if constexpr (V::kKind == kLayer) y += ToFloat(bs.v[j]);
    o.v[j] = FromFloat<T>(y);
  }
  return o;
}

// Reads one access of the row: x, or (fused add) x + residual rounded to T, which is also
// written back to the residual.
template <class V, class T>
FLASHJIT_DEVICE Vec<T, V::kVec> ReadInput(const T* x, T* residual, int64_t col) {
  constexpr int kVec = V::kVec;
  Vec<T, kVec> v = LoadVecHint<V::kStreaming, T, kVec>(x + col);
  if constexpr (V::kKind == kFusedAdd) {
    Vec<T, kVec> r = LoadVecHint<V::kStreaming, T, kVec>(residual + col);
#pragma unroll
    for (int j = 0; j < kVec; ++j) v.v[j] = FromFloat<T>(ToFloat(v.v[j]) + ToFloat(r.v[j]));
    StoreVecHint<V::kStreaming>(residual + col, v);
  }
  return v;
}

template <class V, class T>
FLASHJIT_DEVICE void Accumulate(const Vec<T, V::kVec>& v, float& sum, float& sum_sq) {
#pragma unroll
  for (int j = 0; j < V::kVec; ++j) {
    const float f = ToFloat(v.v[j]);
    sum += f;
    sum_sq += f * f;
  }
}

template <class V>
__device__ void norm(const NormParams& p) {
  using T = typename V::DType;
  using W = typename V::WType;
  constexpr int kThreads = V::kThreads, kVec = V::kVec, kItems = V::kItems;
  static_assert(V::kRows == 1 || kThreads <= 32, "several rows per block need rows <= a warp");
  __shared__ float scratch[32];

  const int lane = threadIdx.x % kThreads;
  const int row = blockIdx.x * V::kRows + threadIdx.x / kThreads;
  const bool active = row < p.rows;  // inactive threads still join the shuffles
  const int r = active ? row : 0;
  const int heads = static_cast<int>(p.heads), token = r / heads, head = r % heads;
  const T* x = RowPtr<T>(p.x, token, head, p.x_layout);
  T* residual =
      V::kKind == kFusedAdd ? RowPtr<T>(p.residual, token, head, p.residual_layout) : nullptr;
  T* out = RowPtr<T>(p.out, token, head, p.out_layout);
  const W* w = static_cast<const W*>(p.weight);
  const W* b = static_cast<const W*>(p.bias);
  const int64_t hidden = p.hidden;  // REQUIRES: hidden % kVec == 0
  const float inv_n = 1.f / static_cast<float>(hidden);
  float sum = 0.f, sum_sq = 0.f;

  if constexpr (kItems > 0) {
    // The row fits in registers: x (and the residual) are read once.   // (kItems, kVec)
    Vec<T, kVec> xs[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t col = (static_cast<int64_t>(i) * kThreads + lane) * kVec;
      if (active && col < hidden) {
        xs[i] = ReadInput<V>(x, residual, col);
        Accumulate<V>(xs[i], sum, sum_sq);
      }
    }
    float shift = 0.f, var;
    if constexpr (V::kKind == kLayer) {
      // Exact two-pass variance over the registers.
      shift = RowSum<kThreads>(sum, scratch) * inv_n;
      float dev = 0.f;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t col = (static_cast<int64_t>(i) * kThreads + lane) * kVec;
        if (active && col < hidden) {
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            const float d = ToFloat(xs[i].v[j]) - shift;
            dev += d * d;
          }
        }
      }
      var = RowSum<kThreads>(dev, scratch) * inv_n;
    } else {
      var = RowSum<kThreads>(sum_sq, scratch) * inv_n;
    }
    const float scale = rsqrtf(var + p.eps);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t col = (static_cast<int64_t>(i) * kThreads + lane) * kVec;
      if (active && col < hidden)
        StoreVecHint<V::kStreaming>(out + col, Normalize<V>(xs[i], w, b, col, shift, scale));
    }
  } else {
    // Streaming: statistics in one pass, then normalise re-reading the row.
    for (int64_t col = lane * kVec; active && col < hidden; col += kThreads * kVec)
      Accumulate<V>(ReadInput<V>(x, residual, col), sum, sum_sq);
    float shift = 0.f, var;
    if constexpr (V::kKind == kLayer) {
      shift = RowSum<kThreads>(sum, scratch) * inv_n;
      var = fmaxf(RowSum<kThreads>(sum_sq, scratch) * inv_n - shift * shift, 0.f);
    } else {
      var = RowSum<kThreads>(sum_sq, scratch) * inv_n;
    }
    const float scale = rsqrtf(var + p.eps);
    const T* src = V::kKind == kFusedAdd ? residual : x;
    for (int64_t col = lane * kVec; active && col < hidden; col += kThreads * kVec) {
      const Vec<T, kVec> v = LoadVec<T, kVec>(src + col);
      StoreVecHint<V::kStreaming>(out + col, Normalize<V>(v, w, b, col, shift, scale));
    }
  }
}

}  // namespace flashjit::norm
