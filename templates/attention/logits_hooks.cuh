// Variant hooks on attention logits: soft cap, ALiBi, sliding window, and RoPE.
//
// Logit of query position qpos against key position kpos, in natural-log units:
//   x = sm_scale * q.k;  if soft cap: x = cap * tanh(x / cap);  if ALiBi: x += slope * (kpos -
//   qpos)
// A sliding window keeps keys kpos >= qpos - window_left.
#pragma once

#include "attention/softmax_state.cuh"

namespace flashjit::attention {

// ALiBi slope of a head (the geometric sequence of Press et al., extended to heads beyond the
// largest power of two as in FlashInfer and the original code).
FLASHJIT_DEVICE float AlibiSlope(int head, int num_heads) {
  int n = 1;
  while (n * 2 <= num_heads) n *= 2;
  if (head < n) return exp2f(-8.f * (head + 1) / n);
  return exp2f(-4.f * ((head - n) * 2 + 1) / n);
}

// The score of a raw dot product for the online softmax (units: see score_scale in the params).
template <class V>
FLASHJIT_DEVICE float TransformScore(float raw, float sm_scale, float soft_cap, float slope,
                                     int kpos, int qpos) {
  if constexpr (V::kSoftCap || V::kAlibi) {
    float x = raw * sm_scale;
    if constexpr (V::kSoftCap) x = soft_cap * tanhf(x / soft_cap);
    if constexpr (V::kAlibi) x += slope * static_cast<float>(kpos - qpos);
    return x * kLog2e;  // score_scale is 1
  } else {
    return raw;  // score_scale = sm_scale * log2(e)
  }
}

// RoPE (rotate halves, as Llama): for i < D/2 the pair (x[i], x[i + D/2]) turns by
// pos * rcp_scale * theta^(-2i/D).
FLASHJIT_DEVICE void RopeAngle(int pos, int i, int head_dim, float rcp_scale, float log2_theta,
                               float& c, float& s) {
  const float freq = rcp_scale * exp2f(-log2_theta * (2.f * i / head_dim));
  sincosf(static_cast<float>(pos) * freq, &s, &c);
}

}  // namespace flashjit::attention
