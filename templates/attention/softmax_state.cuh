// The online-softmax state of attention rows, in base 2, and the operations on it.
//
// A row's state is (m, l, o): the running maximum score m, the sum l of exp2((s - m) * c) over
// the keys seen, and the output o accumulated with the same weights (normalised only at the
// end). Scores are in the units the kernel computes them in; c converts them to log2 units.
// IEEE -inf marks a masked key; a state that has seen no valid key has m = -inf, l = 0, and
// every operation below keeps it finite (no -inf - -inf).
#pragma once

#include "common/config.cuh"
#include "common/float_consts.cuh"

namespace flashjit::attention {

constexpr float kLog2e = 1.4426950408889634f;

// The maximum to subtract: m itself, or 0 while no valid key was seen (then every score is -inf
// and exp2(-inf) = 0 holds without forming -inf - -inf).
FLASHJIT_DEVICE float SafeMax(float m) { return m == NegInf() ? 0.f : m; }

// exp2((s - m) * c) with the clamp above, by the SFU's ex2 with subnormal results flushed to 0:
// exp2f's guard for them is three more instructions on each of a decode step's ten weights, and
// a weight below 2^-126 is nothing beside the row's largest, which is 1 (P rounds to 16 bits
// before the tensor cores read it; a state rescaled by such a factor is dropped, as it is when
// its factor underflows 2^-149). ex2.approx.ftz(-inf) is +0; a NaN stays NaN.
FLASHJIT_DEVICE float Exp2Ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
FLASHJIT_DEVICE float ScoreWeight(float s, float m, float c) {
  return Exp2Ftz((s - SafeMax(m)) * c);
}

// Base-2 log-sum-exp of a finished state: m * c + log2(l), or -inf for an empty row.
FLASHJIT_DEVICE float StateLse(float m, float l, float c) {
  return l > 0.f ? m * c + __log2f(l) : NegInf();
}

// Adds an attention sink (a natural-log logit that joins the softmax denominator only) to a
// normalised row (o, lse2). Returns the factor to multiply o by; updates lse2.
FLASHJIT_DEVICE float AddSink(float& lse2, float sink_logit) {
  const float s2 = sink_logit * kLog2e;
  const float mx = fmaxf(lse2, s2);  // s2 is finite, so mx is finite
  const float total = mx + __log2f(exp2f(lse2 - mx) + exp2f(s2 - mx));
  const float factor = exp2f(lse2 - total);  // 0 for an empty row
  lse2 = total;
  return factor;
}

}  // namespace flashjit::attention
