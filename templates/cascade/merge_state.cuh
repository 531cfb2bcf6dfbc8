// Attention-state merge (cascade attention). For each (seq, head) row, the states (v_i, s_i),
// s_i the base-2 log-sum-exp of the logits behind the output row v_i, merge into
//   s = log2(sum_i 2^s_i),   v = sum_i 2^(s_i - s) v_i      (fp32 math).
// A state with s_i = -inf adds nothing; a row of only -inf states gets v = 0, s = -inf; a NaN
// (or +inf) log-sum-exp makes the row NaN.
//
// Variant: DType (of v), kVec (elements per access), kLanes (lanes per row: a power of two <= 32,
// so that a row never spans warps), kBatch (states whose vectors a lane loads before it
// accumulates them), kChunks (vectors per state a lane loads, kLanes * kVec columns apart),
// kThreads. A row's lanes cover kLanes * kVec * kChunks columns at a time.
#pragma once

#include "cascade/merge_params.cuh"
#include "common/float_consts.cuh"
#include "common/vec.cuh"

namespace flashjit::cascade {

// State t of the row (seq, head), counting src[0]'s states first.
struct StateRef {
  const MergeSource* src;
  int64_t i;
  FLASHJIT_DEVICE StateRef(const MergeParams& p, int t)
      : src(&p.src[t >= p.src[0].count ? 1 : 0]), i(t >= p.src[0].count ? t - p.src[0].count : t) {}
  FLASHJIT_DEVICE float Lse(int64_t seq, int64_t head) const {
    return src->s[seq * src->s_seq + head * src->s_head + i * src->s_state];
  }
  template <class T>
  FLASHJIT_DEVICE const T* Row(int64_t seq, int64_t head) const {
    return static_cast<const T*>(src->v) + seq * src->v_seq + head * src->v_head + i * src->v_state;
  }
};

template <class V>
__device__ void merge_state(const MergeParams& p) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kLanes = V::kLanes, kBatch = V::kBatch, kChunks = V::kChunks;
  constexpr int kRows = V::kThreads / kLanes, kSpan = kLanes * kVec * kChunks;
  static_assert(kLanes <= 32 && 32 % kLanes == 0, "a row's lanes must lie in one warp");
  // REQUIRES (kChunks > 1): head_dim is a multiple of kSpan, so that every chunk is in the row;
  // the host never launches such a variant otherwise, and this keeps memory safe if it did.
  if (kChunks > 1 && p.head_dim % kSpan != 0) return;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRows + threadIdx.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const int64_t seq = FastDiv(static_cast<uint32_t>(row), p.heads);
  const int64_t head = row - seq * p.heads.divisor;
  const bool active = row < p.rows && (p.mask == nullptr || p.mask[seq] != 0);
  const int states = p.src[0].count + p.src[1].count;
  const float inf = Infinity();
  float lse = -inf;  // lane 0's, from its first columns (every span computes the same)

  // A lane covers kChunks column chunks of kVec, kLanes * kVec apart (a warp's accesses stay
  // contiguous): the per-state work (index arithmetic, the log-sum-exp, the weights) is paid
  // once for all of them.
  for (int col0 = lane * kVec; active && col0 < p.head_dim; col0 += kSpan) {
    // One pass over the states, kBatch at a time: their log-sum-exps and vectors are loaded
    // together (one round trip per batch), then folded into a running maximum m, a running
    // sum of 2^(s - m) and the weighted sums, rescaled when m grows (weights are taken against
    // m, never against a rounded merged log-sum-exp).
    float m = -inf, den = 0.f, acc[kChunks][kVec];
    bool nan = false;
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[c][j] = 0.f;
    for (int t0 = 0; t0 < states; t0 += kBatch) {
      float s[kBatch];
      Vec<T, kVec> x[kBatch][kChunks];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        s[b] = -inf;
        if (t0 + b < states) {
          const StateRef st(p, t0 + b);
          s[b] = st.Lse(seq, head);
          const T* v = st.Row<T>(seq, head) + col0;
#pragma unroll
          for (int c = 0; c < kChunks; ++c)
            x[b][c] = LoadVecStreaming<T, kVec>(v + c * kLanes * kVec);
        }
      }
      float m_new = m;
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        nan |= s[b] != s[b];
        m_new = fmaxf(m_new, s[b]);
      }
      if (m_new == -inf) continue;       // nothing but empty states so far
      const float r = exp2f(m - m_new);  // 0 while m = -inf; NaN for +inf, as documented
      den *= r;
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[c][j] *= r;
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (t0 + b >= states) continue;
        const float w = exp2f(s[b] - m_new);
        den += w;
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
          for (int j = 0; j < kVec; ++j) acc[c][j] += w * ToFloat(x[b][c].v[j]);
      }
      m = m_new;
    }
    nan |= den != den;
    const bool empty = !nan && m == -inf;  // no state with any key: v = 0, s = -inf
    const float inv_den = 1.f / den;
    if (col0 == lane * kVec) lse = nan ? QuietNaN() : (empty ? -inf : m + log2f(den));
    T* out = static_cast<T*>(p.v_out) + seq * p.out_v_seq + head * p.out_v_head + col0;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      Vec<T, kVec> o;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        o.v[j] = FromFloat<T>(nan ? QuietNaN() : (empty ? 0.f : acc[c][j] * inv_den));
      StoreVecStreaming(out + c * kLanes * kVec, o);
    }
  }
  // In place, s_out is a state's log-sum-exp that every lane of the row reads above.
  __syncwarp();
  if (active && lane == 0 && p.s_out != nullptr)
    p.s_out[seq * p.out_s_seq + head * p.out_s_head] = lse;
}

}  // namespace flashjit::cascade
