// Gated activations: out = act(x[:, :d]) * x[:, d:], fp32 math.
//
// Variant:  DType, kAct (kSilu, kGelu, kGeluTanh), kThreads, kVec (elements per access),
// kItems (accesses per thread, all loaded before any is stored).
// Block b covers row b / col_blocks, columns [(b % col_blocks) * kThreads * kItems * kVec, ...).
#pragma once

#include "activation/activation_params.cuh"
#include "common/pdl.cuh"
#include "common/vec.cuh"

namespace flashjit::activation {

enum ActKind : int { kSilu = 0, kGelu = 1, kGeluTanh = 2 };

template <int kAct>
FLASHJIT_DEVICE float Activate(float x) {
  if constexpr (kAct == kSilu) {
    return x / (1.f + expf(-x));
  } else if constexpr (kAct == kGelu) {
    return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
  } else {
    const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);  // sqrt(2/pi)
    return 0.5f * x * (1.f + tanhf(inner));
  }
}

template <class V>
__device__ void gated_activation(const ActivationParams& p) {
  // PDL (common/pdl.cuh): nothing before the wait, as the in-place forms write what the previous
  // kernel may still read; the next kernel may launch once every CTA is past it.
  GridDependencyWait();
  GridLaunchDependents();
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kItems = V::kItems, kThreads = V::kThreads;
  const int64_t row = blockIdx.x / p.col_blocks;
  const int64_t col0 = (blockIdx.x % p.col_blocks) * (kThreads * kItems * kVec);
  const T* gate = static_cast<const T*>(p.in) + row * p.in_stride;
  const T* up = gate + p.d;
  T* out = static_cast<T*>(p.out) + row * p.out_stride;

  Vec<T, kVec> g[kItems], u[kItems];  // (kItems, kVec) of each half
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int64_t col = col0 + (static_cast<int64_t>(i) * kThreads + threadIdx.x) * kVec;
    if (col < p.d) {
      g[i] = LoadVecStreaming<T, kVec>(gate + col);
      u[i] = LoadVecStreaming<T, kVec>(up + col);
    }
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int64_t col = col0 + (static_cast<int64_t>(i) * kThreads + threadIdx.x) * kVec;
    if (col < p.d) {
      Vec<T, kVec> o;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        o.v[j] = FromFloat<T>(Activate<V::kAct>(ToFloat(g[i].v[j])) * ToFloat(u[i].v[j]));
      StoreVecStreaming(out + col, o);
    }
  }
}

}  // namespace flashjit::activation
