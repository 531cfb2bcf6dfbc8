// Helpers of the decode GPU tests: KV uploads in any dtype (fp8 included), comparisons of
// outputs and LSE against the fp64 reference, and the reference's options for a call's.
#pragma once

#include <flashjit/decode.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/attention_ref.h"
#include "tests/reference/half.h"

namespace flashjit::test {

inline double DecodeFp8(DType dtype, uint8_t b) {
  const int sign = b >> 7;
  double x;
  if (dtype == DType::kF8E4M3) {
    const int e = (b >> 3) & 0xf, m = b & 7;
    if (e == 15 && m == 7) return NAN;
    x = e == 0 ? m / 8.0 * std::ldexp(1.0, -6) : (1 + m / 8.0) * std::ldexp(1.0, e - 7);
  } else {
    const int e = (b >> 2) & 0x1f, m = b & 3;
    if (e == 31) return m ? NAN : (sign ? -INFINITY : INFINITY);
    x = e == 0 ? m / 4.0 * std::ldexp(1.0, -14) : (1 + m / 4.0) * std::ldexp(1.0, e - 15);
  }
  return sign ? -x : x;
}

// Nearest fp8 code (by search over all finite codes: tests only).
inline uint8_t EncodeFp8(DType dtype, float f) {
  static double table[2][256];
  static bool init = [] {
    for (int c = 0; c < 256; ++c) {
      table[0][c] = DecodeFp8(DType::kF8E4M3, static_cast<uint8_t>(c));
      table[1][c] = DecodeFp8(DType::kF8E5M2, static_cast<uint8_t>(c));
    }
    return true;
  }();
  (void)init;
  const double* t = table[dtype == DType::kF8E4M3 ? 0 : 1];
  int best = 0;
  double err = INFINITY;
  for (int c = 0; c < 256; ++c) {
    if (!std::isfinite(t[c])) continue;
    const double e = std::abs(t[c] - f);
    if (e < err) err = e, best = c;
  }
  return static_cast<uint8_t>(best);
}

// Values as `dtype` (16-bit or fp8) on the device; `rounded` gets what the device holds.
inline DeviceBuffer UploadAs(DType dtype, const std::vector<float>& values,
                             std::vector<double>* rounded) {
  if (DTypeBytes(dtype) == 2) return Upload16(dtype, values, rounded);
  std::vector<uint8_t> bytes(values.size());
  rounded->resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bytes[i] = EncodeFp8(dtype, values[i]);
    (*rounded)[i] = DecodeFp8(dtype, bytes[i]);
  }
  DeviceBuffer buf(bytes.size() + 16);
  buf.Upload(bytes.data(), bytes.size());
  return buf;
}

inline std::vector<float> DownloadF32(const DeviceBuffer& buf, size_t count) {
  std::vector<float> out(count);
  buf.Download(out.data(), count * 4);
  return out;
}

// Tolerance of the output's relative L2 error for a q dtype (P is rounded to it on the tensor
// cores, then the output).
// The fp64 reference's options for a decode call's options and sinks (may be null).
inline ref::DecodeRefOptions RefOptions(const DecodeOptions& opts,
                                        const std::vector<double>* sinks) {
  ref::DecodeRefOptions ro;
  ro.sm_scale = opts.sm_scale;
  ro.soft_cap = opts.logits_soft_cap;
  ro.window_left = opts.window_left;
  ro.alibi = opts.alibi;
  ro.rope = opts.rope;
  ro.rope_scale = opts.rope_scale;
  ro.rope_theta = opts.rope_theta;
  ro.k_scale = opts.k_scale;
  ro.v_scale = opts.v_scale;
  ro.sinks = sinks;
  return ro;
}

inline double OutTolerance(DType q_dtype, bool fp8_kv, bool rope) {
  double t = q_dtype == DType::kBF16 ? 1.5e-2 : 4e-3;
  if (rope) t *= 3;  // the kernel rounds rotated q and k to 16 bits
  if (fp8_kv) t *= 1.5;
  return t;
}

// The LSE's tolerance (times max(1, |reference|)). With in-kernel RoPE the kernel rounds the
// rotated q and k to the query's type, so each logit carries an error of about
// sm_scale * log2(e) * sqrt(2 D) * u / sqrt(3) (u the type's unit roundoff, q and k of unit
// variance): 0.0046 for bf16 (u = 2^-8) and 0.0006 for f16 (2^-11) at D 128, which a row of one
// to a few keys passes on to its LSE undiluted. The bounds are about 4 (bf16) and 7 (f16) of
// those deviations.
constexpr double kLseTolerance = 2e-3;  // without in-kernel RoPE
inline double LseTolerance(DType q_dtype, bool rope) {
  if (!rope) return kLseTolerance;
  return q_dtype == DType::kBF16 ? 2e-2 : 4e-3;
}

// Checks out and lse (base 2) against the reference. `what` describes the case.
inline void CheckDecode(const std::vector<float>& out, const std::vector<double>& ref_out,
                        const std::vector<float>* lse, const std::vector<double>& ref_lse,
                        double out_tol, const std::string& what, double lse_tol = kLseTolerance) {
  ErrorStats e = Compare(out, ref_out);
  INFO(what << ": out " << e.ToString());
  CHECK(e.non_finite == 0);
  CHECK(e.rel_l2 < out_tol);
  if (!lse) return;
  int bad = 0;
  std::string first;
  for (size_t i = 0; i < ref_lse.size(); ++i) {
    const double r = ref_lse[i], g = (*lse)[i];
    const bool ok = std::isinf(r) ? (std::isinf(g) && g < 0)
                                  : std::abs(g - r) <= lse_tol * std::max(1.0, std::abs(r));
    if (!ok && bad++ == 0) first = fmt::format("lse[{}] = {} (reference {})", i, g, r);
  }
  INFO(what << ": " << bad << " bad lse values; first " << first);
  CHECK(bad == 0);
}

}  // namespace flashjit::test
