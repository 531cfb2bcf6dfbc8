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

// Angles are kept in turns (revolutions): a frequency is turns per position, freq / 2 pi, formed
// in double and held as two floats hi + lo (about 48 significant bits):
//   f = 2^(-2i / rotary_dim * log2_theta); smooth = clamp(f * smooth_a + smooth_b, 0, 1);
//   f = (1 - smooth) * f * rcp_scale + smooth * f;  turns = f / (2 pi).
// Every kernel takes its frequencies from Turns and its cos / sin from CosSinTurns (cache mode:
// CacheRow), so all of them round the same way.
struct alignas(8) Turn {
  float hi, lo;
};

template <class V>
FLASHJIT_DEVICE Turn Turns(const RopeParams& p, int i) {
  constexpr double kInvTwoPi = 0.15915494309189535;
  const double f = exp2(-2.0 * i / p.rotary_dim * p.log2_theta);
  const double smooth = fmin(fmax(f * p.smooth_a + p.smooth_b, 0.0), 1.0);
  const double t = ((1.0 - smooth) * (f * p.rcp_scale) + smooth * f) * kInvTwoPi;
  const float hi = static_cast<float>(t);
  return {hi, static_cast<float>(t - hi)};
}

// cos and sin of 2 pi * pos * (t_hi + t_lo), in float only. pos * t_hi = hi + e exactly (e from
// one fma; float(pos) is exact up to |pos| = 2^24), hi's whole turns drop out exactly, and
// e + pos * t_lo is small, so the reduced angle is good to a few 2^-25 turns at any such
// position (the old double-precision path, with float frequencies, was off by pos * 2^-24
// relative). The intrinsics keep the compiler from contracting hi's product into the subtraction
// (which would count e twice). The fast __sincosf is accurate on the reduced range [-pi, pi].
FLASHJIT_DEVICE void CosSinTurns(float pos, float t_hi, float t_lo, float* c, float* s) {
  constexpr float kTwoPi = 6.28318530717958647692f;
  const float hi = __fmul_rn(pos, t_hi);
  const float lo = fmaf(pos, t_lo, fmaf(pos, t_hi, -hi));
  const float r = __fadd_rn(__fsub_rn(hi, rintf(hi)), lo);
  __sincosf(kTwoPi * __fsub_rn(r, rintf(r)), s, c);
}

// Cache mode: row pos of the cache (cos | sin halves), or null outside it (gives NaN).
FLASHJIT_DEVICE const float* CacheRow(const RopeParams& p, int64_t pos) {
  return pos >= 0 && pos < p.max_pos ? p.cos_sin_cache + pos * p.cache_stride : nullptr;
}

// Turns of frequency indices f0 .. f0 + Pairs - 1 (nothing in cache mode).
template <class V>
FLASHJIT_DEVICE void Frequencies(const RopeParams& p, int f0, Turn (&turns)[Pairs<V>()]) {
  if constexpr (V::kMode != kCache) {
#pragma unroll
    for (int j = 0; j < Pairs<V>(); ++j) turns[j] = Turns<V>(p, f0 + j);
  }
}

// cos and sin of the angles of frequency indices f0 .. f0 + Pairs - 1 at `pos`; `turns` holds
// their Pairs turns (registers or shared memory; unused in cache mode). Cache mode reads them,
// four floats at a time where the row allows.
template <class V>
FLASHJIT_DEVICE void Angles(const RopeParams& p, int64_t pos, int f0, const Turn* turns,
                            float (&c)[Pairs<V>()], float (&s)[Pairs<V>()]) {
  constexpr int kN = Pairs<V>();
  if constexpr (V::kMode == kCache) {
    const float* row = CacheRow(p, pos);
    if (row == nullptr) {
#pragma unroll
      for (int j = 0; j < kN; ++j) c[j] = s[j] = __int_as_float(0x7fffffff);
      return;
    }
    const float* cr = row + f0;
    const float* sr = row + p.rotary_dim / 2 + f0;
    if constexpr (kN % 4 == 0) {
      if (((reinterpret_cast<uint64_t>(cr) | reinterpret_cast<uint64_t>(sr)) & 15) == 0) {
#pragma unroll
        for (int j = 0; j < kN; j += 4) {
          const float4 cv = __ldg(reinterpret_cast<const float4*>(cr + j));
          const float4 sv = __ldg(reinterpret_cast<const float4*>(sr + j));
          c[j] = cv.x, c[j + 1] = cv.y, c[j + 2] = cv.z, c[j + 3] = cv.w;
          s[j] = sv.x, s[j + 1] = sv.y, s[j + 2] = sv.z, s[j + 3] = sv.w;
        }
        return;
      }
    }
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      c[j] = __ldg(cr + j);
      s[j] = __ldg(sr + j);
    }
  } else {
    const float pf = static_cast<float>(pos);
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      const Turn t = turns[j];
      CosSinTurns(pf, t.hi, t.lo, &c[j], &s[j]);
    }
  }
}

// One angle (the tile kernel): cos and sin of frequency index i at `pos`, the same arithmetic as
// Frequencies and Angles.
template <class V>
FLASHJIT_DEVICE void AngleAt(const RopeParams& p, int64_t pos, int i, float* c, float* s) {
  if constexpr (V::kMode == kCache) {
    const float* row = CacheRow(p, pos);
    *c = row ? __ldg(row + i) : __int_as_float(0x7fffffff);
    *s = row ? __ldg(row + p.rotary_dim / 2 + i) : __int_as_float(0x7fffffff);
  } else {
    const Turn t = Turns<V>(p, i);
    CosSinTurns(static_cast<float>(pos), t.hi, t.lo, c, s);
  }
}

}  // namespace flashjit::rope
