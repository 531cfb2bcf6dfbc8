// Division by a divisor fixed at launch, by a multiply and a shift (the divisor's magic number is
// computed on the host): for index arithmetic in kernels where a 32- or 64-bit division would
// cost tens of instructions per use.
#pragma once

#include "common/config.cuh"

namespace flashjit {

// n / d for 0 <= n < 2^31 by a multiply and a shift (d >= 1, set on the host).
struct FastDivisor {
  uint64_t mul;
  uint32_t shift;
  uint32_t divisor;
};

FLASHJIT_HD inline FastDivisor MakeFastDivisor(uint32_t d) {
  // mul = ceil(2^(31+l) / d) with l = ceil(log2 d): exact for every n < 2^31.
  uint32_t l = 0;
  while ((1ull << l) < d) ++l;
  const uint64_t k = 31 + l;
  FastDivisor f;
  f.mul = ((1ull << k) + d - 1) / d;
  f.shift = static_cast<uint32_t>(k);
  f.divisor = d;
  return f;
}

FLASHJIT_HD inline uint32_t FastDiv(uint32_t n, const FastDivisor& f) {
  return static_cast<uint32_t>((static_cast<uint64_t>(n) * f.mul) >> f.shift);
}

}  // namespace flashjit
