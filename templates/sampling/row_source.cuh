// Views of one row as non-negative weights (probs, or logits through a tempered softmax) or as
// order-preserving 32-bit keys (logits, for masking), and the loop that walks a row.
//
// Bad numbers never propagate: a NaN, infinite or negative probability, or a NaN or +inf logit,
// has weight 0 and sets `bad` (the row's validity flag); -0.0 is a weight of +0.0. A weight's key
// is its IEEE bit pattern, which orders non-negative floats like their values.
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
      w[j] = ok ? fabsf(x) : 0.f;  // -0.0 as +0.0: its key must not be 0x80000000
    }
  }
  // The same weights as bit patterns, tested as integers (sign bit clear: a weight's bits are its
  // key): valid bits are at most 0x7F7FFFFF. `bad_bits` collects the invalid patterns; the row
  // is bad when (bad_bits & 0x7FFFFFFF) != 0, which leaves -0.0 (0x80000000) a good weight 0.
  FLASHJIT_DEVICE void WeightBits(const Raw& r, uint32_t (&k)[V::kVec], uint32_t& bad_bits) const {
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      const uint32_t b = __float_as_uint(r.v[j]);
      const bool ok = b <= 0x7F7FFFFFu;
      k[j] = ok ? b : 0u;
      bad_bits |= ok ? 0u : b;
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
  FLASHJIT_DEVICE void WeightBits(const Raw& r, uint32_t (&k)[V::kVec], uint32_t& bad_bits) const {
    float w[V::kVec];
    bool bad = false;
    Weights(r, w, bad);
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) k[j] = __float_as_uint(w[j]);
    bad_bits |= bad ? 1u : 0u;
  }
};

// Logits as order-preserving keys (for top-k masking); NaN is the smallest key and bad. -0.0
// and +0.0 are the same logit and get the same key (0x80000000): otherwise -0.0 would rank below
// +0.0 and a top-k boundary among zeros of both signs would drop the negative ones, which the
// reference keeps as ties.
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
      const uint32_t raw = __float_as_uint(x);
      const uint32_t b = raw == 0x80000000u ? 0u : raw;  // -0.0 as +0.0
      const bool nan = x != x;
      bad |= nan;
      k[j] = nan ? 0u : (b & 0x80000000u ? ~b : b | 0x80000000u);
    }
  }
};

// One block's part [begin, end) of a row, read through `Src`. The first pass over it
// (ForEachVec) keeps its first `cache_vecs` vectors in shared memory; later passes read them
// there. Vector slot i of the slice is always handled by thread i % kThreads (ForEachVec and
// PickIndex walk the slice in the same order), so a thread only reads back what it stashed.
template <class V, class Src>
struct SliceView {
  using Raw = typename Src::Raw;
  Src src;
  int64_t begin, end;
  Raw* cache;          // dynamic shared memory, cache_vecs vectors
  int64_t cache_vecs;  // 0: no cache
  bool* filling;       // true until the first pass over the slice has ended

  template <class Src2>
  FLASHJIT_DEVICE SliceView<V, Src2> With(const Src2& other) const {
    return {other, begin, end, reinterpret_cast<typename Src2::Raw*>(cache), cache_vecs, filling};
  }
  FLASHJIT_DEVICE int64_t Slot(int64_t e) const { return (e - begin) / V::kVec; }
  // Without V::kCache the variant has no cache (cache_vecs is 0): plain loads, no test.
  FLASHJIT_DEVICE Raw Load(int64_t e) const {
    if constexpr (V::kCache) {
      const int64_t i = Slot(e);
      if (!*filling && i < cache_vecs) return cache[i];
    }
    return src.Load(e);
  }
  FLASHJIT_DEVICE void Stash(int64_t e, const Raw& r) const {
    if constexpr (V::kCache) {
      const int64_t i = Slot(e);
      if (*filling && i < cache_vecs) cache[i] = r;
    }
  }
  FLASHJIT_DEVICE void Weights(const Raw& r, float (&w)[V::kVec], bool& bad) const {
    src.Weights(r, w, bad);
  }
  FLASHJIT_DEVICE void WeightBits(const Raw& r, uint32_t (&k)[V::kVec], uint32_t& bad_bits) const {
    src.WeightBits(r, k, bad_bits);
  }
  FLASHJIT_DEVICE void Keys(const Raw& r, uint32_t (&k)[V::kVec], bool& bad) const {
    src.Keys(r, k, bad);
  }
};

// Calls f(e, raw) for every vector of a whole row this thread owns (e = first element), with
// four loads in flight. REQUIRES: n % kVec == 0.
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

// Calls f(e, raw) for every vector of the slice this thread owns (e = first element); the first
// call over a slice fills its cache. Software-pipelined: the next group of four loads is issued
// before this group is handled, so the handling (histogram atomics, block-wide steps) overlaps
// the memory latency and up to eight 16-byte loads per thread are in flight. The last group is
// partial (predicated loads), with no separate one-load-at-a-time tail. 1024-thread blocks (at
// most 64 registers) keep the unpipelined loop: there the second group of loads made the joint
// and k-first variants spill about three times as much (nvcc: 36 -> 124 B), unmeasured.
// REQUIRES: (end - begin) % kVec == 0.
template <class V, class Src, class F>
FLASHJIT_DEVICE void ForEachVec(const SliceView<V, Src>& src, F&& f) {
  constexpr int kUnroll = 4;
  constexpr int64_t kStep = static_cast<int64_t>(V::kThreads) * V::kVec;
  using Raw = typename Src::Raw;
  const int64_t end = src.end;
  int64_t e = src.begin + threadIdx.x * V::kVec;
  if constexpr (V::kThreads > 512) {
    for (; e + 3 * kStep < end; e += 4 * kStep) {
      Raw r[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) r[u] = src.Load(e + u * kStep);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        src.Stash(e + u * kStep, r[u]);
        f(e + u * kStep, r[u]);
      }
    }
    for (; e < end; e += kStep) {
      const Raw r = src.Load(e);
      src.Stash(e, r);
      f(e, r);
    }
  } else {
    Raw cur[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (e + u * kStep < end) cur[u] = src.Load(e + u * kStep);
    for (; e < end; e += kUnroll * kStep) {
      const int64_t next = e + kUnroll * kStep;
      Raw nxt[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (next + u * kStep < end) nxt[u] = src.Load(next + u * kStep);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (e + u * kStep < end) {
          src.Stash(e + u * kStep, cur[u]);
          f(e + u * kStep, cur[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) cur[u] = nxt[u];
    }
  }
  *src.filling = false;
}

}  // namespace flashjit::sampling
