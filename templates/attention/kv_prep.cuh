// Warp-local preparation of a warp's 16 keys and values before the tensor cores read them:
// fp8 -> 16-bit conversion, and RoPE on the keys. Each warp touches only its own rows, so only
// __syncwarp orders it.
#pragma once

#include "attention/logits_hooks.cuh"
#include "attention/paged_kv.cuh"
#include "common/vec.cuh"

namespace flashjit::attention {

// Two fp8 values (low byte first) as two T, through the hardware fp8x2 -> f16x2 conversion.
template <class T, class TKV>
FLASHJIT_DEVICE uint32_t Fp8x2To16x2(uint16_t pair) {
  constexpr __nv_fp8_interpretation_t kKind =
      IsSame<TKV, __nv_fp8_e4m3>::value ? __NV_E4M3 : __NV_E5M2;
  const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(pair, kKind);
  uint32_t bits = static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
  if constexpr (IsSame<T, half>::value) {
    return bits;
  } else {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&bits));
    return PackPair<T>(f.x, f.y);
  }
}

// prmt.b32 in its generic mode: byte i of the result is byte (sel >> 4i) & 7 of {y, x}, or that
// byte's sign bit replicated when (sel >> 4i) & 8.
FLASHJIT_DEVICE uint32_t Prmt(uint32_t x, uint32_t y, uint32_t sel) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(x), "r"(y), "r"(sel));
  return r;
}

// fp8 bytes straight into f16 tensor-core registers: Fp8PairF16<TKV, kA, kB>(x, y) is one
// register of two halves, the low one from byte kA and the high one from byte kB of the eight
// bytes {y, x} (0..3: x, 4..7: y). Both conversions are exact: e4m3 by the hardware fp8x2 ->
// f16x2 conversion, e5m2 as f16's upper byte. Two instructions a pair (a byte permute and the
// conversion or a mask); a bf16 pair would take four (the bits placed into a bf16, then an
// exact rescale by 2^120 or 2^112), which is why fp8 caches multiply in f16 (decode_warp.cuh).
template <class TKV, int kA, int kB>
FLASHJIT_DEVICE uint32_t Fp8PairF16(uint32_t x, uint32_t y) {
  static_assert(kA >= 0 && kA < 8 && kB >= 0 && kB < 8, "byte index of {y, x}");
  if constexpr (IsSame<TKV, __nv_fp8_e4m3>::value) {
    // A pair that is already a half of x needs no permute (the keys' pairs, Scores).
    const uint32_t w = kA == 0 && kB == 1   ? x
                       : kA == 2 && kB == 3 ? x >> 16
                                            : Prmt(x, y, kA | (kB << 4));
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<uint16_t>(w), __NV_E4M3);
    return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
  } else {
    return Prmt(x, y, (kA << 4) | (kB << 12)) & 0xff00ff00u;
  }
}

// Chunk pair c of a query row (dims 8c .. 8c + 7 in a, their partners D/2 on in b) turned to
// `pos`; `table`: the CTA's frequencies (FillRopeTable).
template <class T>
FLASHJIT_DEVICE void RopeChunkPair(int pos, const DecodeRopeFreq* table, int c, Vec<T, 8>& a,
                                   Vec<T, 8>& b) {
  const float fpos = static_cast<float>(pos);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    float x = ToFloat(a.v[j]), y = ToFloat(b.v[j]);
    RopeRotate(fpos, table[c * 8 + j], x, y);
    a.v[j] = FromFloat<T>(x);
    b.v[j] = FromFloat<T>(y);
  }
}

// The angles of RoPE on a warp's 16 rows of keys (positions key0 .. key0 + 15). Lane l takes
// the kDims = D/64 dims i0 = l kDims .. i0 + kDims - 1 (and their partners D/2 on) in every row:
// its angles start exact at key0 (rope::CosSinTurns) and step one position a row by the table's
// cos / sin of one position's angle, a few FMAs a pair where a reduction and two MUFU operations
// took 20 instructions (the step's rounding adds a few ulp over 15 rows).
template <int kD>
struct RopeKeyAngles {
  static constexpr int kDims = kD / 64;
  static_assert(kDims >= 1 && kDims <= 4 && 8 % kDims == 0, "a lane's dims lie in one chunk");
  float c[kDims], s[kDims], step_c[kDims], step_s[kDims];

  FLASHJIT_DEVICE static int FirstDim() { return threadIdx.x % 32 * kDims; }
  FLASHJIT_DEVICE RopeKeyAngles(int key0, const DecodeRopeFreq* table) {
    const float pos = static_cast<float>(key0);
#pragma unroll
    for (int d = 0; d < kDims; ++d) {
      const DecodeRopeFreq f = table[FirstDim() + d];
      rope::CosSinTurns(pos, f.hi, f.lo, &c[d], &s[d]);
      step_c[d] = f.c;
      step_s[d] = f.s;
    }
  }
  // Turns the pairs (x[d], y[d]) by this row's angles, then moves the angles to the next row.
  FLASHJIT_DEVICE void Rotate(float (&x)[kDims], float (&y)[kDims]) {
#pragma unroll
    for (int d = 0; d < kDims; ++d) {
      const float a = x[d], b = y[d];
      x[d] = a * c[d] - b * s[d];
      y[d] = b * c[d] + a * s[d];
      const float next_c = c[d] * step_c[d] - s[d] * step_s[d];
      s[d] = s[d] * step_c[d] + c[d] * step_s[d];
      c[d] = next_c;
    }
  }
};

// The angles of RoPE on a thread's key fragments, for fp8 keys that turn in registers
// (DecodeRopeInRegs; DecodeWarp::kRopeRegs). Thread (g, t) = (lane / 4, lane % 4) holds the kF =
// D/8 dims t kF .. t kF + kF - 1, and their partners D/2 on, of keys key0 + g and key0 + g + 8.
// It keeps the kF angles of its first key from step to step: exact (rope::CosSinTurns) at a
// warp's first step, every kAnchorSteps steps and wherever the keys do not move on by one tile;
// otherwise turned by one tile's angle (DecodeRopeStep). Its second key's are one 8-position
// turn on. A dim pair then costs a few FMAs where exact angles take a reduction and two MUFU
// operations. The angles carry a factor kScale: 1/2 for e5m2, whose largest keys (57344) would
// turn past f16's 65504 (DecodeWarp::Scores takes it back out of S, exactly).
template <int kD, class TKV>
struct RopeKeyFragAngles {
  static constexpr int kF = kD / 8;
  static constexpr int kAnchorSteps = 16;
  static constexpr float kScale = IsSame<TKV, __nv_fp8_e5m2>::value ? 0.5f : 1.f;
  float c[kF], s[kF];  // of the thread's first key, one tile back until Turn
  int pos;             // that key's position
  int age;             // steps since the last exact angles

  FLASHJIT_DEVICE void Init() {
    pos = 0;
    age = kAnchorSteps;
  }
  FLASHJIT_DEVICE static int FirstFreq() { return threadIdx.x % 4 * kF; }
  FLASHJIT_DEVICE static const DecodeRopeStep* Steps(const DecodeRopeFreq* table) {
    return reinterpret_cast<const DecodeRopeStep*>(table + kD / 2) + FirstFreq();
  }
  // Prepares the angles for first key `key`: they are left one tile back, and Turn(f) moves
  // frequency f on by that tile (exact angles are taken one tile back for that).
  FLASHJIT_DEVICE void Seek(int key, const DecodeRopeFreq* table) {
    if (key != pos + kDecodeTileKV || age >= kAnchorSteps) {
      const float back = static_cast<float>(key - kDecodeTileKV);
#pragma unroll
      for (int f = 0; f < kF; ++f) {
        const DecodeRopeFreq e = table[FirstFreq() + f];
        rope::CosSinTurns(back, e.hi, e.lo, &c[f], &s[f]);
        c[f] *= kScale;
        s[f] *= kScale;
      }
      age = 0;
    }
    ++age;
    pos = key;
  }
  // Frequency f's angles of the first key (c0, s0) and the second (c1, s1), the first's kept.
  FLASHJIT_DEVICE void Turn(int f, const DecodeRopeStep& st, float& c0, float& s0, float& c1,
                            float& s1) {
    const float nc = c[f] * st.c_tile - s[f] * st.s_tile;
    s[f] = s[f] * st.c_tile + c[f] * st.s_tile;
    c[f] = nc;
    c0 = c[f];
    s0 = s[f];
    c1 = c0 * st.c8 - s0 * st.s8;
    s1 = s0 * st.c8 + c0 * st.s8;
  }
};

// An f16 pair turned by the angles of its two dims: (x, y) = (x * c - y * s, y * c + x * s), in
// float, each result rounded once.
FLASHJIT_DEVICE void TurnHalfPairs(uint32_t& x, uint32_t& y, const float (&c)[2],
                                   const float (&s)[2]) {
  const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&x));
  const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&y));
  x = PackPair<half>(a.x * c[0] - b.x * s[0], a.y * c[1] - b.y * s[1]);
  y = PackPair<half>(b.x * c[0] + a.x * s[0], b.y * c[1] + a.y * s[1]);
}

// kN (1, 2 or 4) consecutive 16-bit values as floats, and back (rounded to nearest).
template <class T, int kN>
FLASHJIT_DEVICE void LoadFloats(const T* p, float (&x)[kN]) {
  const Vec<T, kN> v = *reinterpret_cast<const Vec<T, kN>*>(p);
#pragma unroll
  for (int d = 0; d < kN; ++d) x[d] = ToFloat(v.v[d]);
}
template <class T, int kN>
FLASHJIT_DEVICE void StoreFloats(T* p, const float (&x)[kN]) {
  if constexpr (kN == 1) {
    *p = FromFloat<T>(x[0]);
  } else if constexpr (kN == 2) {
    *reinterpret_cast<uint32_t*>(p) = PackPair<T>(x[0], x[1]);
  } else {
    static_assert(kN == 4, "1, 2 or 4 values");
    *reinterpret_cast<uint2*>(p) = make_uint2(PackPair<T>(x[0], x[1]), PackPair<T>(x[2], x[3]));
  }
}
// kN (1, 2 or 4) consecutive fp8 values as floats (exact, through f16).
template <class TKV, int kN>
FLASHJIT_DEVICE void LoadFp8Floats(const char* p, float (&x)[kN]) {
  uint32_t bytes;
  if constexpr (kN == 1)
    bytes = *reinterpret_cast<const uint8_t*>(p);
  else if constexpr (kN == 2)
    bytes = *reinterpret_cast<const uint16_t*>(p);
  else
    bytes = *reinterpret_cast<const uint32_t*>(p);
  float f[kN < 2 ? 2 : kN];
#pragma unroll
  for (int d = 0; d < kN; d += 2) {
    const uint32_t h = Fp8x2To16x2<half, TKV>(static_cast<uint16_t>(bytes >> (8 * d)));
    const float2 pair = __half22float2(*reinterpret_cast<const __half2*>(&h));
    f[d] = pair.x;
    f[d + 1] = pair.y;
  }
#pragma unroll
  for (int d = 0; d < kN; ++d) x[d] = f[d];
}

// Rotates 16 swizzled 16-bit rows of keys at positions key0 .. key0 + 15 in place.
template <class T, int kD>
FLASHJIT_DEVICE void RopeRows(T* rows, int key0, const DecodeRopeFreq* table) {
  using A = RopeKeyAngles<kD>;
  constexpr int kChunks = kD / 8, kN = A::kDims;
  const int i0 = A::FirstDim(), j0 = i0 + kD / 2;
  A angles(key0, table);
#pragma unroll 4
  for (int row = 0; row < 16; ++row) {
    T* a = rows + SwizzledChunk<kChunks>(row, i0 / 8) * 8 + i0 % 8;
    T* b = rows + SwizzledChunk<kChunks>(row, j0 / 8) * 8 + j0 % 8;
    float x[kN], y[kN];
    LoadFloats<T, kN>(a, x);
    LoadFloats<T, kN>(b, y);
    angles.Rotate(x, y);
    StoreFloats<T, kN>(a, x);
    StoreFloats<T, kN>(b, y);
  }
}

// Converts 16 swizzled fp8 rows of keys (D bytes each) into 16 swizzled rows of T, rotated as
// RopeRows does, in one pass (exact fp8 -> f32, turned, rounded once to T).
template <class T, class TKV, int kD>
FLASHJIT_DEVICE void ConvertRopeRows(const char* src, T* dst, int key0,
                                     const DecodeRopeFreq* table) {
  using A = RopeKeyAngles<kD>;
  constexpr int kSrcChunks = kD / 16, kDstChunks = kD / 8, kN = A::kDims;
  const int i0 = A::FirstDim(), j0 = i0 + kD / 2;
  A angles(key0, table);
#pragma unroll 4
  for (int row = 0; row < 16; ++row) {
    float x[kN], y[kN];
    LoadFp8Floats<TKV, kN>(src + SwizzledChunk<kSrcChunks>(row, i0 / 16) * 16 + i0 % 16, x);
    LoadFp8Floats<TKV, kN>(src + SwizzledChunk<kSrcChunks>(row, j0 / 16) * 16 + j0 % 16, y);
    angles.Rotate(x, y);
    StoreFloats<T, kN>(dst + SwizzledChunk<kDstChunks>(row, i0 / 8) * 8 + i0 % 8, x);
    StoreFloats<T, kN>(dst + SwizzledChunk<kDstChunks>(row, j0 / 8) * 8 + j0 % 8, y);
  }
}

}  // namespace flashjit::attention
