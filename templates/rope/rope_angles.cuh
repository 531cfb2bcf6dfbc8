// Positions, frequencies and angles of the RoPE kernel.
#pragma once

#include "common/config.cuh"
#include "rope/rope_params.cuh"

namespace flashjit::rope {

enum RopeMode : int { kPosIds = 0, kIndptr = 1, kCache = 2 };

// Frequencies (and angles) per chunk: NeoX kVec, interleaved kVec / 2.
template <class V>
constexpr int Pairs() {
  return V::kInterleave ? V::kVec / 2 : V::kVec;
}

// Position of `token`. Indptr mode: the request b with indptr[b] <= token < indptr[b+1] is the
// number of request ends <= token, counted 32 at a time with a ballot.
// REQUIRES: all 32 lanes of the warp call this with the same token.
template <class V>
FLASHJIT_DEVICE int64_t TokenPosition(const RopeParams& p, int token, int lane) {
  if constexpr (V::kMode == kIndptr) {
    int b = 0;
    for (int base = 0; base < p.batch; base += 32) {
      const int end = base + lane + 1;  // indptr index of the end of request base + lane
      const bool done = end <= p.batch && p.indptr[end] <= token;
      const unsigned mask = __ballot_sync(0xffffffffu, done);
      b += __popc(mask);
      if (mask != 0xffffffffu) break;
    }
    b = b < p.batch ? b : p.batch - 1;
    return static_cast<int64_t>(p.offsets[b]) + (token - p.indptr[b]);
  } else {
    return static_cast<int64_t>(static_cast<const typename V::PosType*>(p.pos)[token]);
  }
}

// Position of `token` for kernels whose warps span several tokens. Indptr mode: binary search
// for the request b with indptr[b] <= token < indptr[b+1] (the first b whose end is > token).
template <class V>
FLASHJIT_DEVICE int64_t TokenPositionSearch(const RopeParams& p, int token) {
  if constexpr (V::kMode == kIndptr) {
    int lo = 0, hi = p.batch;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (p.indptr[mid + 1] <= token) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    const int b = lo < p.batch ? lo : p.batch - 1;
    return static_cast<int64_t>(p.offsets[b]) + (token - p.indptr[b]);
  } else {
    return static_cast<int64_t>(static_cast<const typename V::PosType*>(p.pos)[token]);
  }
}

// freq[j] of frequency index f0 + j (in double, rounded once to float):
//   f = 2^(-2i / rotary_dim * log2_theta); smooth = clamp(f * smooth_a + smooth_b, 0, 1);
//   f = (1 - smooth) * f * rcp_scale + smooth * f.
template <class V>
FLASHJIT_DEVICE void Frequencies(const RopeParams& p, int f0, float (&freq)[Pairs<V>()]) {
  if constexpr (V::kMode != kCache) {
#pragma unroll
    for (int j = 0; j < Pairs<V>(); ++j) {
      double f = exp2(-2.0 * (f0 + j) / p.rotary_dim * p.log2_theta);
      const double smooth = fmin(fmax(f * p.smooth_a + p.smooth_b, 0.0), 1.0);
      freq[j] = static_cast<float>((1.0 - smooth) * (f * p.rcp_scale) + smooth * f);
    }
  }
}

// cos and sin of the angles of frequency indices f0 .. f0 + Pairs - 1 at `pos`. The angle is
// formed and reduced modulo 2 pi in double, so large positions keep their accuracy. Cache mode
// reads them instead; a position outside the cache gives NaN.
template <class V>
FLASHJIT_DEVICE void Angles(const RopeParams& p, int64_t pos, int f0,
                            const float (&freq)[Pairs<V>()], float (&c)[Pairs<V>()],
                            float (&s)[Pairs<V>()]) {
  if constexpr (V::kMode == kCache) {
    const bool inside = pos >= 0 && pos < p.max_pos;
    const float* row = p.cos_sin_cache + (inside ? pos : 0) * p.cache_stride;
#pragma unroll
    for (int j = 0; j < Pairs<V>(); ++j) {
      c[j] = inside ? row[f0 + j] : __int_as_float(0x7fffffff);
      s[j] = inside ? row[p.rotary_dim / 2 + f0 + j] : __int_as_float(0x7fffffff);
    }
  } else {
    constexpr double kTwoPi = 6.283185307179586, kInvTwoPi = 0.15915494309189535;
#pragma unroll
    for (int j = 0; j < Pairs<V>(); ++j) {
      const double angle = static_cast<double>(pos) * freq[j];
      __sincosf(static_cast<float>(angle - kTwoPi * rint(angle * kInvTwoPi)), &s[j], &c[j]);
    }
  }
}

// One (frequency, angle) of the tile kernel: cos and sin of frequency index f at `pos`, with the
// same arithmetic as Frequencies and Angles above.
template <class V>
FLASHJIT_DEVICE void AngleAt(const RopeParams& p, int64_t pos, int f, float* c, float* s) {
  if constexpr (V::kMode == kCache) {
    const bool inside = pos >= 0 && pos < p.max_pos;
    const float* row = p.cos_sin_cache + (inside ? pos : 0) * p.cache_stride;
    *c = inside ? row[f] : __int_as_float(0x7fffffff);
    *s = inside ? row[p.rotary_dim / 2 + f] : __int_as_float(0x7fffffff);
  } else {
    constexpr double kTwoPi = 6.283185307179586, kInvTwoPi = 0.15915494309189535;
    const double fd = exp2(-2.0 * f / p.rotary_dim * p.log2_theta);
    const double smooth = fmin(fmax(fd * p.smooth_a + p.smooth_b, 0.0), 1.0);
    const float freq = static_cast<float>((1.0 - smooth) * (fd * p.rcp_scale) + smooth * fd);
    const double angle = static_cast<double>(pos) * freq;
    sincosf(static_cast<float>(angle - kTwoPi * rint(angle * kInvTwoPi)), s, c);
  }
}

}  // namespace flashjit::rope
