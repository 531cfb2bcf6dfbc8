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

// Converts 16 swizzled fp8 rows (D bytes each) into 16 swizzled rows of T.
template <class T, class TKV, int kD>
FLASHJIT_DEVICE void ConvertRows(const char* src, T* dst) {
  constexpr int kSrcChunks = kD / 16, kDstChunks = kD / 8;
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int idx = lane; idx < 16 * kSrcChunks; idx += 32) {
    const int row = idx / kSrcChunks, chunk = idx % kSrcChunks;
    const uint4 in =
        *reinterpret_cast<const uint4*>(src + SwizzledChunk<kSrcChunks>(row, chunk) * 16);
    const uint32_t words[4] = {in.x, in.y, in.z, in.w};
#pragma unroll
    for (int half_chunk = 0; half_chunk < 2; ++half_chunk) {
      uint4 out;
      uint32_t* o = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const uint32_t w = words[half_chunk * 2 + j / 2];
        o[j] = Fp8x2To16x2<T, TKV>(static_cast<uint16_t>(j % 2 ? w >> 16 : w & 0xffffu));
      }
      *reinterpret_cast<uint4*>(dst + SwizzledChunk<kDstChunks>(row, chunk * 2 + half_chunk) * 8) =
          out;
    }
  }
}

// RoPE on 16 rows of keys at positions key0 .. key0 + 15 (rotate halves). Lane l takes the
// chunk pair c = l % kPairs (dims 8c .. 8c + 7 and their partners D/2 on: kPairs = D/16 pairs a
// row) of rows l / kPairs, l / kPairs + 32 / kPairs, ...: a quarter warp's 16-byte accesses
// cover 128 contiguous bytes of one row, and its turns are broadcast reads of the CTA's table
// (FillRopeTable), one a pair, so that few registers are live beside the tile's accumulators.
template <int kD>
struct RopeLanes {
  static constexpr int kPairs = kD / 16, kRowStep = 32 / kPairs, kRows = 16 / kRowStep;
  static_assert(32 % kPairs == 0 && kRows >= 1, "a warp covers whole rows");
  FLASHJIT_DEVICE static int Pair() { return threadIdx.x % 32 % kPairs; }
  FLASHJIT_DEVICE static int Row(int k) { return threadIdx.x % 32 / kPairs + k * kRowStep; }
};

// Turns chunk pair c of a row (dims 8c .. 8c + 7 in a, their partners D/2 on in b) to `pos`.
template <class T>
FLASHJIT_DEVICE void RopeChunkPair(int pos, const rope::Turn* table, int c, Vec<T, 8>& a,
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

// Rotates 16 swizzled 16-bit rows of keys in place.
template <class T, int kD>
FLASHJIT_DEVICE void RopeRows(T* rows, int key0, const rope::Turn* table) {
  using L = RopeLanes<kD>;
  constexpr int kChunks = kD / 8;
  const int c = L::Pair();
#pragma unroll 1
  for (int k = 0; k < L::kRows; ++k) {
    const int row = L::Row(k);
    Vec<T, 8>* pa = reinterpret_cast<Vec<T, 8>*>(rows + SwizzledChunk<kChunks>(row, c) * 8);
    Vec<T, 8>* pb =
        reinterpret_cast<Vec<T, 8>*>(rows + SwizzledChunk<kChunks>(row, c + L::kPairs) * 8);
    Vec<T, 8> a = *pa, b = *pb;
    RopeChunkPair(key0 + row, table, c, a, b);
    *pa = a;
    *pb = b;
  }
}

// Converts 16 swizzled fp8 rows of keys (D bytes each) into 16 swizzled rows of T, rotated as
// RopeRows does, in one pass (exact fp8 -> f16 -> f32, turned, rounded once to T): dims
// 8c .. 8c + 7 are the half c % 2 of source chunk c / 2, their partners kPairs / 2 chunks on.
template <class T, class TKV, int kD>
FLASHJIT_DEVICE void ConvertRopeRows(const char* src, T* dst, int key0, const rope::Turn* table) {
  using L = RopeLanes<kD>;
  constexpr int kSrcChunks = kD / 16, kDstChunks = kD / 8;
  const int c = L::Pair();
  const int byte_off = (c % 2) * 8;
#pragma unroll 1
  for (int k = 0; k < L::kRows; ++k) {
    const int row = L::Row(k);
    const uint2 xs = *reinterpret_cast<const uint2*>(
        src + SwizzledChunk<kSrcChunks>(row, c / 2) * 16 + byte_off);
    const uint2 ys = *reinterpret_cast<const uint2*>(
        src + SwizzledChunk<kSrcChunks>(row, c / 2 + L::kPairs / 2) * 16 + byte_off);
    const float fpos = static_cast<float>(key0 + row);
    uint32_t a[4], b[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {  // dims 8c + 2j, 8c + 2j + 1
      const uint32_t xw = j < 2 ? xs.x : xs.y, yw = j < 2 ? ys.x : ys.y;
      const uint32_t xh = Fp8x2To16x2<half, TKV>(static_cast<uint16_t>(j % 2 ? xw >> 16 : xw));
      const uint32_t yh = Fp8x2To16x2<half, TKV>(static_cast<uint16_t>(j % 2 ? yw >> 16 : yw));
      float2 x = __half22float2(*reinterpret_cast<const __half2*>(&xh));
      float2 y = __half22float2(*reinterpret_cast<const __half2*>(&yh));
      RopeRotate(fpos, table[c * 8 + 2 * j], x.x, y.x);
      RopeRotate(fpos, table[c * 8 + 2 * j + 1], x.y, y.y);
      a[j] = PackPair<T>(x.x, x.y);
      b[j] = PackPair<T>(y.x, y.y);
    }
    *reinterpret_cast<uint4*>(dst + SwizzledChunk<kDstChunks>(row, c) * 8) =
        make_uint4(a[0], a[1], a[2], a[3]);
    *reinterpret_cast<uint4*>(dst + SwizzledChunk<kDstChunks>(row, c + L::kPairs) * 8) =
        make_uint4(b[0], b[1], b[2], b[3]);
  }
}

}  // namespace flashjit::attention
