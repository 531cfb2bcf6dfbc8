// Views of one row as non-negative weights (probs, or logits through a tempered softmax) or as
// order-preserving 32-bit keys (logits, for masking), and the loop that walks a row.
//
// Bad numbers never propagate: a NaN, infinite or negative probability, or a NaN or +inf logit,
// has weight 0 and sets `bad` (the row's validity flag). A weight's key is its IEEE bit pattern,
// which orders non-negative floats like their values.
#pragma once

#include "common/vec.cuh"

namespace flashjit::sampling {

constexpr float kFloatMax = 3.402823466e38f;

template <class T, int N>
FLASHJIT_DEVICE Vec<T, N> LoadRowVec(const T* p) {
  if constexpr (sizeof(Vec<T, N>) == 16) {
    int4 r = __ldg(reinterpret_cast<const int4*>(p));
    return *reinterpret_cast<Vec<T, N>*>(&r);
  } else if constexpr (sizeof(Vec<T, N>) == 8) {
    int2 r = __ldg(reinterpret_cast<const int2*>(p));
    return *reinterpret_cast<Vec<T, N>*>(&r);
  } else {
    return *reinterpret_cast<const Vec<T, N>*>(p);
  }
}

FLASHJIT_DEVICE uint32_t KeyOfWeight(float w) { return __float_as_uint(w); }

// Probabilities as stored.
template <class V>
struct ProbRow {
  using Raw = Vec<float, V::kVec>;
  const float* row;
  FLASHJIT_DEVICE Raw Load(int64_t e) const { return LoadRowVec<float, V::kVec>(row + e); }
  FLASHJIT_DEVICE void Weights(const Raw& r, float (&w)[V::kVec], bool& bad) const {
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      const float x = r.v[j];
      const bool ok = x >= 0.f && x <= kFloatMax;  // false for NaN, inf, negative
      bad |= !ok;
      w[j] = ok ? x : 0.f;
    }
  }
};

// exp((logit - max) / temperature): softmax weights, unnormalised.
template <class V>
struct LogitRow {
  using T = typename V::DType;
  using Raw = Vec<T, V::kVec>;
  const T* row;
  float max;    // largest finite-or--inf logit of the row
  float scale;  // log2(e) / temperature
  FLASHJIT_DEVICE Raw Load(int64_t e) const { return LoadRowVec<T, V::kVec>(row + e); }
  FLASHJIT_DEVICE void Weights(const Raw& r, float (&w)[V::kVec], bool& bad) const {
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      const float x = ToFloat(r.v[j]);
      const bool ok = x <= kFloatMax;  // false for NaN and +inf
      bad |= !ok;
      w[j] = (ok && x >= -kFloatMax) ? exp2f((x - max) * scale) : 0.f;
    }
  }
};

// Logits as order-preserving keys (for top-k masking); NaN is the smallest key and bad.
template <class V>
struct LogitKeyRow {
  using T = typename V::DType;
  using Raw = Vec<T, V::kVec>;
  const T* row;
  FLASHJIT_DEVICE Raw Load(int64_t e) const { return LoadRowVec<T, V::kVec>(row + e); }
  FLASHJIT_DEVICE void Keys(const Raw& r, uint32_t (&k)[V::kVec], bool& bad) const {
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      const float x = ToFloat(r.v[j]);
      const uint32_t b = __float_as_uint(x);
      const bool nan = x != x;
      bad |= nan;
      k[j] = nan ? 0u : (b & 0x80000000u ? ~b : b | 0x80000000u);
    }
  }
};

// Calls f(e, raw) for every vector of the row this thread owns (e = first element), with four
// loads in flight. REQUIRES: n % kVec == 0.
template <class V, class Src, class F>
FLASHJIT_DEVICE void ForEachVec(const Src& src, int64_t n, F&& f) {
  constexpr int64_t kStep = static_cast<int64_t>(V::kThreads) * V::kVec;
  int64_t e = threadIdx.x * V::kVec;
  for (; e + 3 * kStep < n; e += 4 * kStep) {
    typename Src::Raw r[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) r[u] = src.Load(e + u * kStep);
#pragma unroll
    for (int u = 0; u < 4; ++u) f(e + u * kStep, r[u]);
  }
  for (; e < n; e += kStep) f(e, src.Load(e));
}

}  // namespace flashjit::sampling
