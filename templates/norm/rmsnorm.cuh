// RMSNorm: one block per row.
//
// Variant:  DType, kThreads, kVec (elements per access), kItems (accesses each thread keeps in
// registers; 0 = streaming over rows longer than the register tile, which reads x twice),
// kGemma (scale by weight + 1).
#pragma once

#include "common/pdl.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"
#include "norm/norm_params.cuh"

namespace flashjit::norm {

template <class V>
__device__ void rmsnorm(const RmsNormParams& p) {
  // PDL (common/pdl.cuh): nothing before the wait, as the in-place forms write what the previous
  // kernel may still read; the next kernel may launch once every CTA is past it.
  GridDependencyWait();
  GridLaunchDependents();
  using T = typename V::DType;
  constexpr int kThreads = V::kThreads, kVec = V::kVec, kItems = V::kItems;
  __shared__ float scratch[32];

  const int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(p.x) + row * p.x_stride;
  const T* w = static_cast<const T*>(p.weight);
  T* out = static_cast<T*>(p.out) + row * p.out_stride;
  const int64_t hidden = p.hidden;  // REQUIRES: hidden % kVec == 0
  const float gemma = V::kGemma ? 1.f : 0.f;

  if constexpr (kItems > 0) {
    // The row fits in registers: one read of x.       // (kItems, kVec) per thread
    Vec<T, kVec> xs[kItems];
    float sum_sq = 0.f;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t col = (static_cast<int64_t>(i) * kThreads + threadIdx.x) * kVec;
      if (col < hidden) {
        xs[i] = LoadVecStreaming<T, kVec>(x + col);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          float f = ToFloat(xs[i].v[j]);
          sum_sq += f * f;
        }
      }
    }
    const float inv_rms = rsqrtf(BlockSum<kThreads>(sum_sq, scratch) / hidden + p.eps);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t col = (static_cast<int64_t>(i) * kThreads + threadIdx.x) * kVec;
      if (col < hidden) {
        Vec<T, kVec> ws = LoadVec<T, kVec>(w + col), o;
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          o.v[j] = FromFloat<T>(ToFloat(xs[i].v[j]) * inv_rms * (ToFloat(ws.v[j]) + gemma));
        StoreVec(out + col, o);
      }
    }
  } else {
    // Streaming: sum of squares, then a second pass (served mostly from L2).
    float sum_sq = 0.f;
    for (int64_t col = threadIdx.x * kVec; col < hidden; col += kThreads * kVec) {
      Vec<T, kVec> xv = LoadVec<T, kVec>(x + col);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        float f = ToFloat(xv.v[j]);
        sum_sq += f * f;
      }
    }
    const float inv_rms = rsqrtf(BlockSum<kThreads>(sum_sq, scratch) / hidden + p.eps);
    for (int64_t col = threadIdx.x * kVec; col < hidden; col += kThreads * kVec) {
      Vec<T, kVec> xv = LoadVec<T, kVec>(x + col), ws = LoadVec<T, kVec>(w + col), o;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        o.v[j] = FromFloat<T>(ToFloat(xv.v[j]) * inv_rms * (ToFloat(ws.v[j]) + gemma));
      StoreVec(out + col, o);
    }
  }
}

}  // namespace flashjit::norm
