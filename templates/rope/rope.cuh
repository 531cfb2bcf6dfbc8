// Rotary position embedding of q and k, one warp per token.
//
// Variant:  DType, PosType (int32_t / int64_t), kMode (kPosIds, kIndptr, kCache),
// kInterleave (GPT-J pairs (2i, 2i+1); else NeoX pairs (i, i + rotary_dim / 2)),
// kVec (elements per access), kWarps (tokens per block).
//
// A "chunk" is what one thread rotates with one set of angles: NeoX, kVec elements of each half;
// interleaved, kVec contiguous elements (kVec / 2 pairs). The warp's lanes are split into
// (chunk, head slot); each lane computes its angles once and walks over the q and k heads.
#pragma once

#include "common/vec.cuh"
#include "rope/rope_params.cuh"

namespace flashjit::rope {

enum RopeMode : int { kPosIds = 0, kIndptr = 1, kCache = 2 };
constexpr int kHeadUnroll = 4;  // heads loaded before any is stored: loads in flight

template <class V>
FLASHJIT_DEVICE int64_t TokenPosition(const RopeParams& p, int token) {
  if constexpr (V::kMode == kIndptr) {
    int lo = 0, hi = p.batch - 1;  // last request whose indptr[b] <= token
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (p.indptr[mid] <= token)
        lo = mid;
      else
        hi = mid - 1;
    }
    return static_cast<int64_t>(p.offsets[lo]) + (token - p.indptr[lo]);
  } else {
    return static_cast<int64_t>(static_cast<const typename V::PosType*>(p.pos)[token]);
  }
}

// cos and sin of the angle of frequency index `f` at position `pos`.
template <class V>
FLASHJIT_DEVICE void Angle(const RopeParams& p, int64_t pos, int f, float& c, float& s) {
  if constexpr (V::kMode == kCache) {
    if (pos < 0 || pos >= p.max_pos) {
      c = s = __int_as_float(0x7fffffff);  // NaN marks a position outside the cache
      return;
    }
    const float* row = p.cos_sin_cache + pos * p.cache_stride;
    c = row[f];
    s = row[p.rotary_dim / 2 + f];
  } else {
    // Angles in double: a float frequency is off by ~1e-6 relative, which at position 1e4 is
    // already 1e-2 rad. The reduced angle is exact enough for sincosf.
    double freq = exp2(-2.0 * f / p.rotary_dim * p.log2_theta);
    const double smooth = fmin(fmax(freq * p.smooth_a + p.smooth_b, 0.0), 1.0);
    freq = (1.0 - smooth) * (freq * p.rcp_scale) + smooth * freq;
    const double angle = static_cast<double>(pos) * freq;
    const double kTwoPi = 6.283185307179586;
    sincosf(static_cast<float>(angle - kTwoPi * rint(angle / kTwoPi)), &s, &c);
  }
}

template <class T>
FLASHJIT_DEVICE T* HeadPtr(const void* base, int token, int head, const HeadLayout& l) {
  return const_cast<T*>(static_cast<const T*>(base)) + token * l.stride_token +
         head * l.stride_head;
}

template <class V>
__device__ void rope(const RopeParams& p) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec;
  static_assert(!V::kInterleave || kVec % 2 == 0, "interleaved pairs need kVec >= 2");
  const int lane = threadIdx.x % 32;
  const int token = blockIdx.x * V::kWarps + threadIdx.x / 32;
  if (token >= p.nnz) return;  // whole warps leave together
  const int64_t pos = TokenPosition<V>(p, token);
  const int half = p.rotary_dim / 2;
  const int chunks = V::kInterleave ? p.rotary_dim / kVec : half / kVec;
  const int heads = p.num_q_heads + p.num_k_heads;
  const int slots = chunks >= 32 ? 1 : 32 / chunks;
  const int first_chunk = chunks >= 32 ? lane : lane % chunks;
  const int slot = chunks >= 32 ? 0 : lane / chunks;

  for (int c = first_chunk; slot < slots && c < chunks; c += 32) {
    const int e0 = c * kVec;  // first element of the chunk            // (kVec)
    float cs[kVec], sn[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if (!V::kInterleave || j % 2 == 0)
        Angle<V>(p, pos, V::kInterleave ? (e0 + j) / 2 : e0 + j, cs[j], sn[j]);
      else
        cs[j] = cs[j - 1], sn[j] = sn[j - 1];
    }
    for (int h0 = slot; h0 < heads; h0 += slots * kHeadUnroll) {
      Vec<T, kVec> a[kHeadUnroll], b[kHeadUnroll];  // NeoX: first and second half
      T* dst[kHeadUnroll];
#pragma unroll
      for (int u = 0; u < kHeadUnroll; ++u) {
        const int h = h0 + u * slots;
        if (h >= heads) break;
        const bool is_q = h < p.num_q_heads;
        const T* src = is_q ? HeadPtr<T>(p.q, token, h, p.q_layout)
                            : HeadPtr<T>(p.k, token, h - p.num_q_heads, p.k_layout);
        dst[u] = is_q ? HeadPtr<T>(p.q_out, token, h, p.q_out_layout)
                      : HeadPtr<T>(p.k_out, token, h - p.num_q_heads, p.k_out_layout);
        a[u] = LoadVecStreaming<T, kVec>(src + e0);
        if constexpr (!V::kInterleave) b[u] = LoadVecStreaming<T, kVec>(src + e0 + half);
      }
#pragma unroll
      for (int u = 0; u < kHeadUnroll; ++u) {
        if (h0 + u * slots >= heads) break;
        Vec<T, kVec> oa, ob;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          if constexpr (V::kInterleave) {
            const float x = ToFloat(a[u].v[j]), y = ToFloat(a[u].v[j ^ 1]);
            oa.v[j] = FromFloat<T>(j % 2 == 0 ? x * cs[j] - y * sn[j] : x * cs[j] + y * sn[j]);
          } else {
            const float x = ToFloat(a[u].v[j]), y = ToFloat(b[u].v[j]);
            oa.v[j] = FromFloat<T>(x * cs[j] - y * sn[j]);
            ob.v[j] = FromFloat<T>(y * cs[j] + x * sn[j]);
          }
        }
        StoreVecStreaming(dst[u] + e0, oa);
        if constexpr (!V::kInterleave) StoreVecStreaming(dst[u] + e0 + half, ob);
      }
    }
  }

  // Dimensions past rotary_dim pass through (nothing to do in place).
  const int rest = (p.head_dim - p.rotary_dim) / kVec;
  if (rest == 0) return;
  for (int i = lane; i < heads * rest; i += 32) {
    const int h = i / rest, e = p.rotary_dim + (i % rest) * kVec;
    const bool is_q = h < p.num_q_heads;
    const T* src = is_q ? HeadPtr<T>(p.q, token, h, p.q_layout)
                        : HeadPtr<T>(p.k, token, h - p.num_q_heads, p.k_layout);
    T* dst = is_q ? HeadPtr<T>(p.q_out, token, h, p.q_out_layout)
                  : HeadPtr<T>(p.k_out, token, h - p.num_q_heads, p.k_out_layout);
    if (src != dst) StoreVecStreaming(dst + e, LoadVecStreaming<T, kVec>(src + e));
  }
}

}  // namespace flashjit::rope
