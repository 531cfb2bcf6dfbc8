#include "tests/reference/page_ref.h"

#include <cmath>
#include <limits>

namespace flashjit::ref {

double Fp8ToDouble(DType dtype, uint8_t bits) {
  const bool e4m3 = dtype == DType::kF8E4M3;
  const int mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exp = (bits & 0x7f) >> mbits, mant = bits & ((1 << mbits) - 1);
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  if (e4m3 && exp == 15 && mant == 7) return std::numeric_limits<double>::quiet_NaN();
  if (!e4m3 && exp == 31)
    return mant ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  if (exp == 0) return sign * std::ldexp(mant, 1 - bias - mbits);
  return sign * std::ldexp((1 << mbits) + mant, exp - bias - mbits);
}

uint8_t DoubleToFp8Saturate(DType dtype, double x) {
  // Nearest finite code by search over all codes of x's sign; ties go to the even code.
  uint8_t best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = 0; c < 128; ++c) {
    const uint8_t code = static_cast<uint8_t>(c | (std::signbit(x) ? 0x80 : 0));
    const double v = Fp8ToDouble(dtype, code);
    if (!std::isfinite(v)) continue;
    const double err = std::abs(v - x);
    if (err < best_err || (err == best_err && (code & 1) == 0)) {
      best = code;
      best_err = err;
    }
  }
  return best;
}

}  // namespace flashjit::ref
