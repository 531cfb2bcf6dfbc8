// Row-level building blocks of the norm kernel: locating a row, loading a thread's share of
// it, and the per-element math.
#pragma once

#include "common/vec.cuh"
#include "norm/norm_params.cuh"

namespace flashjit::norm {

enum NormKind : int { kRms = 0, kFusedAdd = 1, kLayer = 2 };

// Where one thread's row lives. Rows past the end are inactive: their threads still join the
// shuffles and barriers but touch no memory.
template <class T>
struct RowRef {
  const T* x;
  T* residual;
  T* out;
  bool active;
};

template <class T>
FLASHJIT_DEVICE T* RowPtr(const void* base, int token, int head, const NormRowLayout& l) {
  return const_cast<T*>(static_cast<const T*>(base)) + token * l.stride_token +
         head * l.stride_head;
}

// Row `sub` of group `g`; a row r is (token r / heads, head r % heads).
template <class V, class T = typename V::DType>
FLASHJIT_DEVICE RowRef<T> Locate(const NormParams& p, int64_t g, int sub) {
  const int64_t row = g * V::kRows + sub;
  const bool active = row < p.rows;
  const int r = active ? static_cast<int>(row) : 0;
  const int heads = static_cast<int>(p.heads), token = r / heads, head = r % heads;
  RowRef<T> ref;
  ref.x = RowPtr<T>(p.x, token, head, p.x_layout);
  ref.residual =
      V::kKind == kFusedAdd ? RowPtr<T>(p.residual, token, head, p.residual_layout) : nullptr;
  ref.out = RowPtr<T>(p.out, token, head, p.out_layout);
  ref.active = active;
  return ref;
}

// Column of access i of the thread at `lane`.
template <class V>
FLASHJIT_DEVICE int64_t Col(int i, int lane) {
  return (static_cast<int64_t>(i) * V::kThreads + lane) * V::kVec;
}

// One thread's share of a row held in registers: x (and the residual).   // (kItems, kVec)
template <class V>
struct RowTile {
  Vec<typename V::DType, V::kVec> x[V::kItems];
  Vec<typename V::DType, V::kVec> r[V::kKind == kFusedAdd ? V::kItems : 1];
};

template <class V, class T>
FLASHJIT_DEVICE void LoadTile(RowTile<V>& t, const RowRef<T>& ref, int lane, int64_t hidden) {
#pragma unroll
  for (int i = 0; i < V::kItems; ++i) {
    const int64_t col = Col<V>(i, lane);
    if (ref.active && col < hidden) {
      t.x[i] = LoadVecHint<V::kStreaming, T, V::kVec>(ref.x + col);
      if constexpr (V::kKind == kFusedAdd)
        t.r[i] = LoadVecHint<V::kStreaming, T, V::kVec>(ref.residual + col);
    }
  }
}

// Weights and biases: read-only for the kernel's lifetime, so through the non-coherent path
// (ld.global.nc), which keeps them in L1 across the rows a block or SM normalises.
template <class W, int N>
FLASHJIT_DEVICE Vec<W, N> LoadParam(const W* p) {
  Vec<W, N> out;
  if constexpr (sizeof(Vec<W, N>) == 16) {
    const int4 r = __ldg(reinterpret_cast<const int4*>(p));
    out = *reinterpret_cast<const Vec<W, N>*>(&r);
  } else if constexpr (sizeof(Vec<W, N>) == 8) {
    const int2 r = __ldg(reinterpret_cast<const int2*>(p));
    out = *reinterpret_cast<const Vec<W, N>*>(&r);
  } else {
    out = *reinterpret_cast<const Vec<W, N>*>(p);
  }
  return out;
}

// x + r rounded to T (what the residual stores and the norm then reads).
template <class T, int N>
FLASHJIT_DEVICE Vec<T, N> AddRounded(const Vec<T, N>& x, const Vec<T, N>& r) {
  Vec<T, N> s;
#pragma unroll
  for (int j = 0; j < N; ++j) s.v[j] = FromFloat<T>(ToFloat(x.v[j]) + ToFloat(r.v[j]));
  return s;
}

template <class T, int N>
FLASHJIT_DEVICE void Accumulate(const Vec<T, N>& v, float& sum, float& sum_sq) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const float f = ToFloat(v.v[j]);
    sum += f;
    sum_sq += f * f;
  }
}

template <class T, int N>
FLASHJIT_DEVICE float SquaredDeviation(const Vec<T, N>& v, float mean) {
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const float d = ToFloat(v.v[j]) - mean;
    s += d * d;
  }
  return s;
}

// out = (v - shift) * scale * (w + gemma) (+ b for LayerNorm), for one access.
template <class V, class T, class W, int N>
FLASHJIT_DEVICE Vec<T, N> Normalize(const Vec<T, N>& v, const Vec<W, N>& w, const Vec<W, N>& b,
                                    float shift, float scale) {
  const float gemma = V::kGemma ? 1.f : 0.f;
  Vec<T, N> o;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    float y = (ToFloat(v.v[j]) - shift) * scale * (ToFloat(w.v[j]) + gemma);
    if constexpr (V::kKind == kLayer) y += ToFloat(b.v[j]);
    o.v[j] = FromFloat<T>(y);
  }
  return o;
}

}  // namespace flashjit::norm
