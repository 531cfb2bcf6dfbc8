// Double-precision reference for decode attention, written from the definition:
//   logits[h, j] = sm_scale * k_scale * q'[h] . k'[j, h / group]
//                  (soft cap: cap * tanh(x / cap); ALiBi: + slope(h) * (j - (L - 1)))
//   keys j < L - 1 - window_left are left out when window_left >= 0
//   out[h] = v_scale * sum_j softmax(logits[h])_j v[j, h / group]  (sinks join the denominator)
//   lse[h] = log2(sum_j exp(logits[h, j]) (+ exp(sink[h])))
// where q', k' are RoPE-rotated (rotate halves) at positions L - 1 and j when rope is on.
// A row with no visible key gets out = 0 and lse = -inf.
#pragma once

#include <cstdint>
#include <vector>

namespace flashjit::ref {

struct DecodeRefOptions {
  double sm_scale = 0;  // 0: 1 / sqrt(D)
  double soft_cap = 0;
  int window_left = -1;
  bool alibi = false;
  bool rope = false;
  double rope_scale = 1, rope_theta = 1e4;
  double k_scale = 1, v_scale = 1;
  const std::vector<double>* sinks = nullptr;  // [Hq] or null
};

double AlibiSlope(int head, int num_heads);

// q [Hq, D]; k, v [L, Hkv, D] dense; out [Hq, D]; lse [Hq].
void DecodeAttention(const double* q, const double* k, const double* v, int64_t kv_len,
                     int num_qo_heads, int num_kv_heads, int head_dim,
                     const DecodeRefOptions& options, double* out, double* lse);

}  // namespace flashjit::ref
