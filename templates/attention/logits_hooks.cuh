// Variant hooks on attention logits: soft cap, ALiBi, sliding window, and RoPE.
//
// Logit of query position qpos against key position kpos, in natural-log units:
//   x = sm_scale * q.k;  if soft cap: x = cap * tanh(x / cap);  if ALiBi: x += slope * (kpos -
//   qpos)
// A sliding window keeps keys kpos >= qpos - window_left.
#pragma once

#include "attention/softmax_state.cuh"
#include "rope/rope_angles.cuh"

namespace flashjit::attention {

// ALiBi slope of a head (the geometric sequence of Press et al., extended to heads beyond the
// largest power of two as in FlashInfer and the original code).
FLASHJIT_DEVICE float AlibiSlope(int head, int num_heads) {
  int n = 1;
  while (n * 2 <= num_heads) n *= 2;
  if (head < n) return exp2f(-8.f * (head + 1) / n);
  return exp2f(-4.f * ((head - n) * 2 + 1) / n);
}

// cap * tanh(x / cap) for x = raw * sm_scale, as cap * (1 - 2 / (1 + 2^(raw * k))) with
// k = 2 log2(e) sm_scale / cap: one multiply, the SFU's 2^x and reciprocal, two more
// arithmetic instructions. tanhf and a division per score (session 13's form) cost about 40
// instructions on the path of every tile: Gemma-2's D 256 decode read at 2.6 TB/s with the cap
// and 4.3 without (session 14, ncu and the bench). Error: |t - tanh| below about 3e-7 (the
// reciprocal's and 2^x's few ulps around 1 - 2r), so the logit (cap * t) is off by at most
// about 3e-7 * cap. 2^x is clamped at 2^64, where t rounds to 1 (no inf / inf); a NaN score
// stays NaN (the clamp is a compare that NaN fails, not fminf, which would return 64).
FLASHJIT_DEVICE float SoftCap(float raw, float k, float cap) {
  const float a = raw * k;
  const float e = exp2f(a > 64.f ? 64.f : a);
  return cap * (1.f - __fdividef(2.f, 1.f + e));
}

// The score of a raw dot product for the online softmax (units: see score_scale in the params).
template <class V>
FLASHJIT_DEVICE float TransformScore(float raw, float sm_scale, float soft_cap, float slope,
                                     int kpos, int qpos) {
  if constexpr (V::kSoftCap || V::kAlibi) {
    float x = raw * sm_scale;
    if constexpr (V::kSoftCap) x = SoftCap(raw, 2.f * kLog2e * sm_scale / soft_cap, soft_cap);
    if constexpr (V::kAlibi) x += slope * static_cast<float>(kpos - qpos);
    return x * kLog2e;  // score_scale is 1
  } else {
    return raw;  // score_scale = sm_scale * log2(e)
  }
}

// RoPE (rotate halves, as Llama): for i < D/2 the pair (x[i], x[i + D/2]) turns by
// pos * rcp_scale * theta^(-2i/D) radians. A CTA keeps the D/2 frequencies in shared memory
// (FillRopeTable), each as its turns a position, formed in double and held as two floats, and the
// cos / sin of one position's angle. The query's angle comes from rope::CosSinTurns, as in the
// RoPE kernels (whole turns drop out exactly, then the fast __sincosf on [-pi, pi]: a few 2^-25
// turns at any position below 2^24); the keys' start there at a warp's first key and step one
// position a row (RopeKeyAngles). Until session 25 every angle took exp2f and the accurate
// sincosf, whose range reduction held fp8 decode with RoPE at 0.4-0.6 TB/s, and whose float
// frequency put the angle off by pos x 2^-24 relative.
struct alignas(16) DecodeRopeFreq {
  float hi, lo;  // turns a position: hi + lo
  float c, s;    // cos and sin of one position's angle
};
// Keys that turn in registers (DecodeRopeInRegs) step by 8 positions (a thread's second key of
// a step) and by a tile's kTileKV (its next step) instead: cos and sin of those angles.
struct alignas(16) DecodeRopeStep {
  float c8, s8;          // 8 positions
  float c_tile, s_tile;  // kTileKV positions
};
// Turns a position of frequency i, in double.
FLASHJIT_DEVICE double DecodeRopeTurns(int i, int head_dim, float rcp_scale, float log2_theta) {
  constexpr double kInvTwoPi = 0.15915494309189535;
  return static_cast<double>(rcp_scale) *
         exp2(-2.0 * i / head_dim * static_cast<double>(log2_theta)) * kInvTwoPi;
}
// Frequency turns t's entry; (c, s): cos and sin of one position's angle, in double.
FLASHJIT_DEVICE DecodeRopeFreq DecodeRopeFreqOf(double t, double& c, double& s) {
  sincospi(2.0 * t, &s, &c);
  const float hi = static_cast<float>(t);
  return {hi, static_cast<float>(t - hi), static_cast<float>(c), static_cast<float>(s)};
}
// From one position's cos and sin (DecodeRopeFreqOf's, in double) by doubling the angle, three
// times for 8 positions and log2(kTileKV) times for a tile: a few multiplies where sincospi takes
// hundreds of instructions, good to about 2^-46 (float keeps 2^-24).
template <int kTileKV>
FLASHJIT_DEVICE DecodeRopeStep DecodeRopeStepOf(double c, double s) {
  static_assert(kTileKV >= 8 && (kTileKV & (kTileKV - 1)) == 0, "a power of two");
  DecodeRopeStep r = {};
  for (int n = 2; n <= kTileKV; n *= 2) {
    const double c2 = c * c - s * s;
    s = 2.0 * c * s;
    c = c2;
    if (n == 8) r.c8 = static_cast<float>(c), r.s8 = static_cast<float>(s);
  }
  r.c_tile = static_cast<float>(c);
  r.s_tile = static_cast<float>(s);
  return r;
}

// Turns the pair (x, y) = (dim i, dim i + D/2) to position pos (f: the table's entry i).
FLASHJIT_DEVICE void RopeRotate(float pos, const DecodeRopeFreq& f, float& x, float& y) {
  float c, s;
  rope::CosSinTurns(pos, f.hi, f.lo, &c, &s);
  const float a = x, b = y;
  x = a * c - b * s;
  y = b * c + a * s;
}

}  // namespace flashjit::attention
