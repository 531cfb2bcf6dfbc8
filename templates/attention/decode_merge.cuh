// Merge of a split request's partial results by their log-sum-exp, a warp at a time:
//   lse = log2(sum_i 2^lse_i),  o = sum_i 2^(lse_i - lse) o_i;  all-empty partials give o = 0,
//   lse = -inf. Sinks join here (once), not in the partials.
// MergeHeadWarp: the last CTA of a split request (plans); MergeColumnsCta: the merge kernel.
#pragma once

#include "attention/decode_params.cuh"
#include "attention/softmax_state.cuh"
#include "common/pdl.cuh"
#include "common/vec.cuh"

namespace flashjit::attention {

// Reads N floats past L1 (other SMs wrote them), 16 bytes at a time where N allows.
template <int N>
FLASHJIT_DEVICE void LoadPartialRow(const float* src, float (&x)[N]) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int j = 0; j < N; j += 4) {
      const float4 v = __ldcg(reinterpret_cast<const float4*>(src + j));
      x[j] = v.x;
      x[j + 1] = v.y;
      x[j + 2] = v.z;
      x[j + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; j += 2) {
      const float2 v = __ldcg(reinterpret_cast<const float2*>(src + j));
      x[j] = v.x;
      x[j + 1] = v.y;
    }
  }
}

// One warp merges slots first .. first + n - 1 of query head qh into out_row (D elements) and
// *lse (when lse is not null). The lanes read 32 partials' LSE at once; the outputs are read
// kBatch partials at a time with every load in flight together (the merge is latency-bound:
// it is the tail of a split request).
template <class V>
FLASHJIT_DEVICE void MergeHeadWarp(const float* partial_o, const float* partial_lse, int first,
                                   int n, int num_qo_heads, int qh, typename V::DTypeQ* out_row,
                                   float* lse, const float* sinks) {
  using T = typename V::DTypeQ;
  constexpr int kD = V::kHeadDim, kPerLane = kD / 32, kBatch = kPerLane <= 4 ? 16 : 8;
  const int lane = threadIdx.x % 32;
  auto slot = [&](int i) { return static_cast<int64_t>(first + i) * num_qo_heads + qh; };
  float lse_lane = NegInf();  // LSE of partial `lane` (first block of 32)
  float m = NegInf();
  for (int i0 = 0; i0 < n; i0 += 32) {
    const float x = i0 + lane < n ? __ldcg(partial_lse + slot(i0 + lane)) : NegInf();
    if (i0 == 0) lse_lane = x;
    m = fmaxf(m, x);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float acc[kPerLane] = {};
  float total = 0.f;  // this lane's share of the sum of weights
  for (int i0 = 0; i0 < n; i0 += 32) {
    const int count = min(32, n - i0);
    const float x =
        i0 == 0 ? lse_lane : (lane < count ? __ldcg(partial_lse + slot(i0 + lane)) : NegInf());
    const float e_lane = ScoreWeight(x, m, 1.f);  // 0 for an empty partial or past n
    total += e_lane;
    for (int j0 = 0; j0 < count; j0 += kBatch) {
      float v[kBatch][kPerLane];
      float e[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        e[b] = __shfl_sync(0xffffffffu, e_lane, (j0 + b) % 32);
        if (j0 + b < count) {
          LoadPartialRow<kPerLane>(partial_o + slot(i0 + j0 + b) * kD + lane * kPerLane, v[b]);
        } else {
          e[b] = 0.f;
#pragma unroll
          for (int j = 0; j < kPerLane; ++j) v[b][j] = 0.f;
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b)
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) acc[j] += e[b] * v[b][j];
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
  float lse2 = StateLse(m, total, 1.f);
  float scale = total > 0.f ? 1.f / total : 0.f;
  if (sinks) scale *= AddSink(lse2, sinks[qh]);
  Vec<T, kPerLane> o;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) o.v[j] = FromFloat<T>(acc[j] * scale);
  StoreVec(out_row + lane * kPerLane, o);
  if (lane == 0 && lse) *lse = lse2;
}

// The CTA merges 32 columns (`col` .. col + 31, a lane each) of query head qh over slots
// first .. first + n - 1 into out_row[col ..] and (col 0) *lse when not null. Warp w takes the
// blocks of 32 partials w, w + kMergeWarps, ...: a block's LSE load (a lane each) and the 32 loads
// of its column in flight together, the warp's running (max, sum, acc) rescaled between blocks;
// then the warps' states are combined through shared memory. So up to 32 x kMergeWarps partials
// cost one round trip.
template <class V>
FLASHJIT_DEVICE void MergeColumnsCta(const float* partial_o, const float* partial_lse, int first,
                                     int n, int num_qo_heads, int qh, int col,
                                     typename V::DTypeQ* out_row, float* lse, const float* sinks) {
  using T = typename V::DTypeQ;
  constexpr int kD = V::kHeadDim, kWarps = kMergeWarps;  // blockDim.x = kMergeWarps x 32
  __shared__ float warp_m[kWarps], warp_total[kWarps], warp_acc[kWarps][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  auto slot = [&](int i) { return static_cast<int64_t>(first + i) * num_qo_heads + qh; };
  float m = NegInf(), total = 0.f, acc = 0.f;  // total: this lane's share of the sum of weights
  for (int i0 = warp * 32; i0 < n; i0 += kWarps * 32) {
    const int count = min(32, n - i0);
    const float x = lane < count ? __ldcg(partial_lse + slot(i0 + lane)) : NegInf();
    float v[32];
#pragma unroll
    for (int b = 0; b < 32; ++b)
      v[b] = b < count ? __ldcg(partial_o + slot(i0 + b) * kD + col + lane) : 0.f;
    float mb = x;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mb = fmaxf(mb, __shfl_xor_sync(0xffffffffu, mb, o));
    mb = fmaxf(m, mb);
    const float rescale = ScoreWeight(m, mb, 1.f);  // 0 while nothing was summed
    total *= rescale;
    acc *= rescale;
    m = mb;
    const float e_lane = ScoreWeight(x, m, 1.f);  // 0 for an empty partial or past n
    total += e_lane;
#pragma unroll
    for (int b = 0; b < 32; ++b) acc += __shfl_sync(0xffffffffu, e_lane, b) * v[b];
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
  warp_acc[warp][lane] = acc;
  if (lane == 0) {
    warp_m[warp] = m;
    warp_total[warp] = total;
  }
  __syncthreads();
  if (warp != 0) return;
  float mc = NegInf();
  for (int w = 0; w < kWarps; ++w) mc = fmaxf(mc, warp_m[w]);
  total = 0.f;
  acc = 0.f;
  for (int w = 0; w < kWarps; ++w) {
    const float f = ScoreWeight(warp_m[w], mc, 1.f);  // 0 for a warp that summed nothing
    total += f * warp_total[w];
    acc += f * warp_acc[w][lane];
  }
  float lse2 = StateLse(mc, total, 1.f);
  float scale = total > 0.f ? 1.f / total : 0.f;
  if (sinks) scale *= AddSink(lse2, sinks[qh]);
  out_row[col + lane] = FromFloat<T>(acc * scale);
  if (col == 0 && lane == 0 && lse) *lse = lse2;
}

// The merge kernel: a CTA of kMergeWarps warps per (merge item, query head, 32 columns), grid
// (items, heads x D / 32): the merge's reads spread over as many SMs as it has CTAs (one SM
// reads only about 30 GB/s, session 15). Launched after the attention kernel, with programmatic
// dependent launch where allowed: the plan's records are read before GridDependencyWait, the
// partials after.
template <class V>
__device__ void decode_merge(const DecodeMergeParams& p) {
  using T = typename V::DTypeQ;
  constexpr int kSlices = V::kHeadDim / 32;
  GridLaunchDependents();
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
  const int qh = blockIdx.y / kSlices, col = (blockIdx.y % kSlices) * 32;
  GridDependencyWait();
  MergeColumnsCta<V>(p.partial_o, p.partial_lse, item.first_partial, item.num_partials,
                     p.num_qo_heads, qh, col,
                     static_cast<T*>(p.out) + item.request * p.o_stride_b + qh * p.o_stride_h,
                     p.lse ? p.lse + item.request * p.lse_stride_b + qh : nullptr, p.sinks);
}

}  // namespace flashjit::attention
