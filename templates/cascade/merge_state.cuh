// Attention-state merge (cascade attention). For each (seq, head) row, the states (v_i, s_i),
// s_i the base-2 log-sum-exp of the logits behind the output row v_i, merge into
//   s = log2(sum_i 2^s_i),   v = sum_i 2^(s_i - s) v_i      (fp32 math).
// A state with s_i = -inf adds nothing; a row of only -inf states gets v = 0, s = -inf; a NaN
// (or +inf) log-sum-exp makes the row NaN.
//
// Variant: DType (of v), kVec (elements per access), kLanes (lanes per row: a power of two <= 32,
// so that a row never spans warps), kThreads. A row's lanes cover kLanes * kVec columns at a
// time; each lane loads up to kBatch states' vectors before it accumulates them.
#pragma once

#include "cascade/merge_params.cuh"
#include "common/vec.cuh"

namespace flashjit::cascade {

constexpr int kBatch = 4;

FLASHJIT_DEVICE float Infinity() { return __int_as_float(0x7f800000); }
FLASHJIT_DEVICE float QuietNaN() { return __int_as_float(0x7fc00000); }

// State t of the row (seq, head), counting src[0]'s states first: its log-sum-exp, and its
// output row (element 0) through `v`.
template <class T>
FLASHJIT_DEVICE float State(const MergeParams& p, int t, int64_t seq, int64_t head, const T** v) {
  const bool second = t >= p.src[0].count;
  const MergeSource& src = p.src[second ? 1 : 0];
  const int64_t i = second ? t - p.src[0].count : t;
  *v = static_cast<const T*>(src.v) + seq * src.v_seq + head * src.v_head + i * src.v_state;
  return src.s[seq * src.s_seq + head * src.s_head + i * src.s_state];
}

template <class V>
__device__ void merge_state(const MergeParams& p) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kLanes = V::kLanes, kRows = V::kThreads / kLanes;
  static_assert(kLanes <= 32 && 32 % kLanes == 0, "a row's lanes must lie in one warp");
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRows + threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const int64_t seq = row / p.heads, head = row % p.heads;
  const bool active = row < p.rows && (p.mask == nullptr || p.mask[seq] != 0);
  const int states = p.src[0].count + p.src[1].count;

  // The merged log-sum-exp, from the states' log-sum-exps alone.
  const float inf = Infinity(), qnan = QuietNaN();
  float m = -inf;
  bool nan = false;
  const T* v;
  for (int t = 0; active && t < states; ++t) {
    const float s = State(p, t, seq, head, &v);
    m = fmaxf(m, s);
    nan |= s != s;
  }
  float den = 0.f;
  for (int t = 0; active && m != -inf && t < states; ++t)
    den += exp2f(State(p, t, seq, head, &v) - m);  // m = +inf: NaN, as documented
  const float lse = nan ? qnan : (m == -inf ? -inf : m + log2f(den));

  if (active) {
    T* out = static_cast<T*>(p.v_out) + seq * p.out_v_seq + head * p.out_v_head;
    for (int col = lane * kVec; col < p.head_dim; col += kLanes * kVec) {
      float acc[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[j] = lse != lse ? qnan : 0.f;
      for (int t0 = 0; lse == lse && lse != -inf && t0 < states; t0 += kBatch) {
        Vec<T, kVec> x[kBatch];
        float w[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          w[b] = 0.f;
          if (t0 + b < states) {
            w[b] = exp2f(State(p, t0 + b, seq, head, &v) - lse);
            x[b] = LoadVecStreaming<T, kVec>(v + col);
          }
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
          if (t0 + b < states)
#pragma unroll
            for (int j = 0; j < kVec; ++j) acc[j] += w[b] * ToFloat(x[b].v[j]);
      }
      Vec<T, kVec> o;
#pragma unroll
      for (int j = 0; j < kVec; ++j) o.v[j] = FromFloat<T>(acc[j]);
      StoreVecStreaming(out + col, o);
    }
  }
  // In place, s_out is a state's log-sum-exp that every lane of the row reads above.
  __syncwarp();
  if (active && lane == 0 && p.s_out != nullptr)
    p.s_out[seq * p.out_s_seq + head * p.out_s_head] = lse;
}

}  // namespace flashjit::cascade
