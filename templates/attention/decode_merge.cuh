// Merge of a split request's partial results by their log-sum-exp: one warp per (request,
// query head), lanes across head_dim.
//   lse = log2(sum_i 2^lse_i),  o = sum_i 2^(lse_i - lse) o_i;  all-empty partials give o = 0,
//   lse = -inf. Sinks join here (once), not in the partials.
// Used by the merge kernel (single decode) and by the last CTA of a split request (plans).
#pragma once

#include "attention/decode_params.cuh"
#include "attention/softmax_state.cuh"
#include "common/vec.cuh"

namespace flashjit::attention {

// One warp merges slots first .. first + n - 1 of query head qh into out_row (D elements) and
// *lse (when lse is not null). Partials are read past L1 (other SMs wrote them).
template <class V>
FLASHJIT_DEVICE void MergeHeadWarp(const float* partial_o, const float* partial_lse, int first,
                                   int n, int num_qo_heads, int qh, typename V::DTypeQ* out_row,
                                   float* lse, const float* sinks) {
  using T = typename V::DTypeQ;
  constexpr int kD = V::kHeadDim, kPerLane = kD / 32;
  const int lane = threadIdx.x % 32;
  float m = NegInf();
  for (int i = 0; i < n; ++i)
    m = fmaxf(m, __ldcg(partial_lse + static_cast<int64_t>(first + i) * num_qo_heads + qh));
  float acc[kPerLane] = {};
  float total = 0.f;
  for (int i = 0; i < n; ++i) {
    const int64_t slot = static_cast<int64_t>(first + i) * num_qo_heads + qh;
    const float e = ScoreWeight(__ldcg(partial_lse + slot), m, 1.f);
    total += e;
    const float* src = partial_o + slot * kD + lane * kPerLane;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) acc[j] += e * __ldcg(src + j);
  }
  float lse2 = StateLse(m, total, 1.f);
  float scale = total > 0.f ? 1.f / total : 0.f;
  if (sinks) scale *= AddSink(lse2, sinks[qh]);
  Vec<T, kPerLane> o;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) o.v[j] = FromFloat<T>(acc[j] * scale);
  StoreVec(out_row + lane * kPerLane, o);
  if (lane == 0 && lse) *lse = lse2;
}

template <class V>
__device__ void decode_merge(const DecodeMergeParams& p) {
  using T = typename V::DTypeQ;
  const int num_items = p.num_items ? *p.num_items : static_cast<int>(gridDim.x);
  if (static_cast<int>(blockIdx.x) >= num_items) return;
  DecodeMergeItem item;
  if (p.items) {
    item = p.items[blockIdx.x];
  } else {
    item.request = 0;
    item.first_partial = 0;
    item.num_partials = p.single_partials;
  }
  const int qh = blockIdx.y * kMergeHeadsPerCta + threadIdx.x / 32;
  if (qh >= p.num_qo_heads) return;
  MergeHeadWarp<V>(p.partial_o, p.partial_lse, item.first_partial, item.num_partials,
                   p.num_qo_heads, qh,
                   static_cast<T*>(p.out) + item.request * p.o_stride_b + qh * p.o_stride_h,
                   p.lse ? p.lse + item.request * p.lse_stride_b + qh : nullptr, p.sinks);
}

}  // namespace flashjit::attention
