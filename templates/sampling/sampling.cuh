// The sampling kernel: one block per output row.
//
//   weights ─► filter (threshold key T) ─► sample (inverse CDF) | renormalise | mask
//
// Variant: DType (input element), kInput (0 probs, 1 logits), kFilter (FilterKind), kOutput
// (OutputKind), kThreads, kVec (elements per access), kKeysAreLogits (filter on logit keys).
#pragma once

#include "sampling/philox.cuh"
#include "sampling/pick.cuh"
#include "sampling/radix_select.cuh"
#include "sampling/sampling_params.cuh"

namespace flashjit::sampling {

enum FilterKind : int { kNone = 0, kTopK = 1, kTopP = 2, kMinP = 3, kJoint = 4, kTopKFirst = 5 };
enum OutputKind : int { kSample = 0, kProbs = 1, kMaskLogits = 2 };

struct RowStats {
  float max;
  double total;
  bool bad;
};

// One pass: the largest weight, the mass of weights with key >= floor_key, any bad number.
template <class V, class Src>
FLASHJIT_DEVICE RowStats StatsPass(const Src& src, int64_t n, uint32_t floor_key, BlockScratch& s) {
  float mx = 0.f, sum = 0.f;
  bool bad = false;
  ForEachVec<V>(src, n, [&](int64_t, const typename Src::Raw& r) {
    float w[V::kVec];
    src.Weights(r, w, bad);
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      mx = fmaxf(mx, w[j]);
      if (KeyOfWeight(w[j]) >= floor_key) sum += w[j];
    }
  });
  RowStats st;
  st.max = BlockReduce<V::kThreads>(mx, s, OpMax());
  st.total = BlockReduce<V::kThreads>(static_cast<double>(sum), s, OpAdd());
  st.bad = BlockReduce<V::kThreads>(static_cast<int>(bad), s, OpMax()) != 0;
  return st;
}

// Largest logit that is not NaN or +inf (-inf when none), and whether a NaN/+inf was seen.
template <class V>
FLASHJIT_DEVICE float LogitMax(const LogitKeyRow<V>& src, int64_t n, bool* bad_out,
                               BlockScratch& s) {
  float mx = -__int_as_float(0x7f800000);
  bool bad = false;
  ForEachVec<V>(src, n, [&](int64_t, const typename LogitKeyRow<V>::Raw& r) {
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      const float x = ToFloat(r.v[j]);
      const bool ok = x <= kFloatMax;
      bad |= !ok;
      if (ok) mx = fmaxf(mx, x);
    }
  });
  *bad_out = BlockReduce<V::kThreads>(static_cast<int>(bad), s, OpMax()) != 0;
  return BlockReduce<V::kThreads>(mx, s, OpMax());
}

// The kept set of one row of weights: threshold key and kept mass.
template <class V, class Src>
FLASHJIT_DEVICE SelectResult FilterRow(const Src& src, int64_t n, int k, float p, float min_p,
                                       RadixHistogram& h, BlockScratch& s) {
  constexpr int kFilter = V::kFilter;
  SelectResult sel;
  if constexpr (kFilter == kNone || kFilter == kMinP) {
    RowStats st = StatsPass<V>(src, n, 0u, s);
    sel.bad = st.bad;
    sel.total = sel.mass = st.total;
    if constexpr (kFilter == kMinP) {
      sel.key = KeyOfWeight(st.max * min_p);
      if (sel.key > KeyOfWeight(st.max)) sel.key = KeyOfWeight(st.max);  // rounding, p = 1
      sel.mass = StatsPass<V>(src, n, sel.key, s).total;
    }
  } else if constexpr (kFilter == kTopK) {
    sel = RadixSelect<V, false, true>(src, n, k, 1.f, 0u, h, s);
  } else if constexpr (kFilter == kTopP) {
    sel = RadixSelect<V, true, true>(src, n, 0u, p, 0u, h, s);
  } else {
    SelectResult by_k = RadixSelect<V, false, true>(src, n, k, 1.f, 0u, h, s);
    // Joint: top-p over the whole row. Top-k first: top-p over what top-k kept.
    SelectResult by_p =
        RadixSelect<V, true, true>(src, n, 0u, p, kFilter == kJoint ? 0u : by_k.key, h, s);
    sel = by_p.key >= by_k.key ? by_p : by_k;
    sel.bad = by_k.bad;
    sel.total = by_k.total;
  }
  return sel;
}

template <class V>
__device__ void sample_rows(const SamplingParams& p) {
  using T = typename V::DType;
  __shared__ RadixHistogram hist;
  __shared__ BlockScratch scratch;
  __shared__ PickScratch pick_scratch;
  const int64_t row = blockIdx.x, n = p.vocab;
  int64_t in_row = row;
  if (p.indices) {
    in_row = p.index_bytes == 8 ? static_cast<const int64_t*>(p.indices)[row]
                                : static_cast<const int32_t*>(p.indices)[row];
  }
  const bool index_ok = in_row >= 0 && in_row < p.rows_in;
  const T* in = static_cast<const T*>(p.input) + (index_ok ? in_row : 0) * p.in_stride;

  // Per-row knobs, clamped into their domains (device values cannot be checked on the host).
  int k = p.top_k_arr ? p.top_k_arr[row] : p.top_k;
  k = k < 1 ? 1 : (k > n ? static_cast<int>(n) : k);
  float top_p = p.top_p_arr ? p.top_p_arr[row] : p.top_p;
  top_p = top_p > 0.f ? (top_p < 1.f ? top_p : 1.f) : 1e-30f;  // NaN -> tiny
  float min_p = p.min_p_arr ? p.min_p_arr[row] : p.min_p;
  min_p = min_p >= 0.f ? (min_p < 1.f ? min_p : 1.f) : 0.f;
  float temperature = p.temperature_arr ? p.temperature_arr[row] : p.temperature;
  temperature = temperature > 1e-6f ? temperature : 1e-6f;

  SelectResult sel;
  bool bad = !index_ok;
  float logit_max = 0.f, scale = 0.f;
  if constexpr (V::kKeysAreLogits) {
    LogitKeyRow<V> keys{in};
    sel = RadixSelect<V, false, false>(keys, index_ok ? n : 0, k, 1.f, 0u, hist, scratch);
    bad |= sel.bad;
  } else if constexpr (V::kInput == 1) {
    bool logit_bad = false;
    logit_max = LogitMax<V>(LogitKeyRow<V>{in}, index_ok ? n : 0, &logit_bad, scratch);
    scale = 1.4426950408889634f / temperature;
    sel = FilterRow<V>(LogitRow<V>{in, logit_max, scale}, index_ok ? n : 0, k, top_p, min_p, hist,
                       scratch);
    bad |= logit_bad || sel.bad || !(sel.mass > 0);
  } else {
    sel = FilterRow<V>(ProbRow<V>{reinterpret_cast<const float*>(in)}, index_ok ? n : 0, k, top_p,
                       min_p, hist, scratch);
    bad |= sel.bad || !(sel.mass > 0);
  }

  if constexpr (V::kOutput == kSample) {
    const uint64_t seed = p.seed_ptr ? *p.seed_ptr : p.seed;
    const uint64_t offset = p.offset_ptr ? *p.offset_ptr : p.offset;
    const float u = UniformDraw(seed, offset, row, 0);
    long long token = -1;
    if (sel.mass > 0) {
      auto pick = [&](float target) {
        if constexpr (V::kInput == 1)
          return PickIndex<V>(LogitRow<V>{in, logit_max, scale}, n, sel.key, target, scratch,
                              pick_scratch);
        else
          return PickIndex<V>(ProbRow<V>{reinterpret_cast<const float*>(in)}, n, sel.key, target,
                              scratch, pick_scratch);
      };
      token = pick(u * static_cast<float>(sel.mass));
      if (token < 0) token = pick(0.f);  // rounding pushed the target past the end
    }
    if (threadIdx.x == 0) {
      static_cast<int32_t*>(p.out)[row] = token >= 0 ? static_cast<int32_t>(token) : 0;
      if (p.valid) p.valid[row] = !bad && token >= 0;
    }
  } else if constexpr (V::kOutput == kMaskLogits) {
    T* out = static_cast<T*>(p.out) + row * p.out_stride;
    if (threadIdx.x == 0 && p.valid) p.valid[row] = !bad;
    {
      LogitKeyRow<V> keys{in};
      const float neg_inf = -__int_as_float(0x7f800000);
      ForEachVec<V>(keys, n, [&](int64_t e, const typename LogitKeyRow<V>::Raw& r) {
        uint32_t kk[V::kVec];
        bool b = false;
        keys.Keys(r, kk, b);
        Vec<T, V::kVec> o;
#pragma unroll
        for (int j = 0; j < V::kVec; ++j)
          o.v[j] = (index_ok && kk[j] >= sel.key && kk[j] != 0u) ? r.v[j] : FromFloat<T>(neg_inf);
        StoreVec(out + e, o);
      });
    }
  } else {
    // Renormalised probabilities (softmax when there is no filter), always fp32.
    float* out = static_cast<float*>(p.out) + row * p.out_stride;
    if (threadIdx.x == 0 && p.valid) p.valid[row] = !bad;
    {
      const float inv = sel.mass > 0 ? static_cast<float>(1.0 / sel.mass) : 0.f;
      auto write = [&](const auto& src) {
        ForEachVec<V>(src, n, [&](int64_t e, const auto& r) {
          float w[V::kVec];
          bool b = false;
          src.Weights(r, w, b);
          Vec<float, V::kVec> o;
#pragma unroll
          for (int j = 0; j < V::kVec; ++j)
            o.v[j] = index_ok && KeyOfWeight(w[j]) >= sel.key ? w[j] * inv : 0.f;
          StoreVec(out + e, o);
        });
      };
      if constexpr (V::kInput == 1)
        write(LogitRow<V>{in, logit_max, scale});
      else
        write(ProbRow<V>{reinterpret_cast<const float*>(in)});
    }
  }
}

}  // namespace flashjit::sampling
