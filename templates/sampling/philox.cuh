// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator, so draw (seed, offset, row, i) is a pure function of its inputs.
#pragma once

#include "common/config.cuh"

namespace flashjit::sampling {

struct Philox4 {
  uint32_t x, y, z, w;
};

FLASHJIT_DEVICE Philox4 Philox4x32(Philox4 ctr, uint32_t k0, uint32_t k1) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(0xD2511F53u, ctr.x), lo0 = 0xD2511F53u * ctr.x;
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, ctr.z), lo1 = 0xCD9E8D57u * ctr.z;
    ctr = {hi1 ^ ctr.y ^ k0, lo1, hi0 ^ ctr.w ^ k1, lo0};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return ctr;
}

// A uniform float in [0, 1) with 24 random bits, for draw `draw` of `row`.
FLASHJIT_DEVICE float UniformDraw(uint64_t seed, uint64_t offset, uint64_t row, uint32_t draw) {
  const Philox4 r =
      Philox4x32({static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32),
                  static_cast<uint32_t>(row), draw ^ static_cast<uint32_t>(row >> 32)},
                 static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return (r.x >> 8) * (1.0f / 16777216.0f);
}

}  // namespace flashjit::sampling
