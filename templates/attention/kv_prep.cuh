// Warp-local preparation of a warp's 16 keys and values before the tensor cores read them:
// fp8 -> 16-bit conversion, and RoPE on the keys. Each warp touches only its own rows, so only
// __syncwarp orders it.
#pragma once

#include "attention/logits_hooks.cuh"
#include "attention/paged_kv.cuh"
#include "common/vec.cuh"

namespace flashjit::attention {

// Converts 16 swizzled fp8 rows (D bytes each) into 16 swizzled rows of T.
template <class T, class TKV, int kD>
FLASHJIT_DEVICE void ConvertRows(const char* src, T* dst) {
  constexpr int kSrcChunks = kD / 16, kDstChunks = kD / 8;
  const int lane = threadIdx.x % 32;
  for (int idx = lane; idx < 16 * kSrcChunks; idx += 32) {
    const int row = idx / kSrcChunks, chunk = idx % kSrcChunks;
    const Vec<TKV, 16> in =
        *reinterpret_cast<const Vec<TKV, 16>*>(src + SwizzledChunk<kSrcChunks>(row, chunk) * 16);
#pragma unroll
    for (int half_chunk = 0; half_chunk < 2; ++half_chunk) {
      Vec<T, 8> out;
#pragma unroll
      for (int j = 0; j < 8; ++j) out.v[j] = FromFloat<T>(ToFloat(in.v[half_chunk * 8 + j]));
      *reinterpret_cast<Vec<T, 8>*>(dst + SwizzledChunk<kDstChunks>(row, chunk * 2 + half_chunk) *
                                              8) = out;
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
