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

// Rotates 16 swizzled rows of keys at positions key0 .. key0 + 15 in place (rotate halves).
template <class T, int kD>
FLASHJIT_DEVICE void RopeRows(T* rows, int key0, float rcp_scale, float log2_theta) {
  constexpr int kChunks = kD / 8, kHalf = kD / 2;
  const int lane = threadIdx.x % 32;
  for (int idx = lane; idx < 16 * kHalf; idx += 32) {
    const int row = idx / kHalf, i = idx % kHalf;
    T* a = rows + SwizzledChunk<kChunks>(row, i / 8) * 8 + i % 8;
    T* b = rows + SwizzledChunk<kChunks>(row, (i + kHalf) / 8) * 8 + i % 8;
    float c, s;
    RopeAngle(key0 + row, i, kD, rcp_scale, log2_theta, c, s);
    const float x = ToFloat(*a), y = ToFloat(*b);
    *a = FromFloat<T>(x * c - y * s);
    *b = FromFloat<T>(y * c + x * s);
  }
}

}  // namespace flashjit::attention
