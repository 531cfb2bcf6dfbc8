// Rotary position embedding of q and k. Three kernels:
//  - row (kKernel kRowKernel, the default): a token per row_chunks * head_slots threads, each
//    thread owning one 16-byte chunk (both NeoX halves) of every head_slots-th head (RopeRow);
//  - warp (kWarpKernel): one warp per token, warps walking over tokens (below, RopeWarp);
//  - tile (kTileKernel): a block takes tile_tokens tokens; every thread loads kItems work items
//    (a head's chunk of one token) at once, the block computes each (token, frequency) angle
//    once into shared memory while those loads are in flight, then rotates and stores
//    (RopeTile).
//
// Variant:  DType, PosType (int32_t / int64_t), kMode (kPosIds, kIndptr, kCache),
// kInterleave (GPT-J pairs (2i, 2i+1); else NeoX pairs (i, i + rotary_dim / 2)),
// kVec (elements per access), kWarps (warps per block), kKernel, kItems (tile: items per thread;
// row: heads in flight per thread).
//
// A "chunk" is what one lane rotates with one set of angles: NeoX, kVec elements of each half
// (kVec frequencies); interleaved, kVec contiguous elements (kVec / 2 frequencies). Lanes are
// split into (chunk, head slot); each lane computes its frequencies once, its angles once per
// token, and walks over that token's q and k heads.
#pragma once

#include "common/vec.cuh"
#include "rope/rope_angles.cuh"
#include "rope/rope_params.cuh"

namespace flashjit::rope {

constexpr int kHeadUnroll = 4;  // warp kernel: heads loaded before any is stored

enum RopeKernel : int { kWarpKernel = 0, kTileKernel = 1, kRowKernel = 2 };

template <class T>
FLASHJIT_DEVICE T* HeadPtr(const void* base, int token, int head, const HeadLayout& l) {
  return const_cast<T*>(static_cast<const T*>(base)) + token * l.stride_token +
         head * l.stride_head;
}

// Rotates chunk `c` of heads slot, slot + slots, ... of one token.
template <class V>
FLASHJIT_DEVICE void RotateChunk(const RopeParams& p, int token, int c, int64_t pos,
                                 const float (&freq)[Pairs<V>()], int slot, int slots) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kPairs = Pairs<V>();
  const int e0 = c * kVec, half = p.rotary_dim / 2;
  const int heads = p.num_q_heads + p.num_k_heads;
  Vec<T, kVec> a[kHeadUnroll], b[kHeadUnroll];  // NeoX: first and second half
  T* dst[kHeadUnroll];
  auto load = [&](int h0) {
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
  };
  load(slot);  // in flight while the angles are computed
  float cs[kPairs], sn[kPairs];
  Angles<V>(p, pos, c * kPairs, freq, cs, sn);
  for (int h0 = slot; h0 < heads; h0 += slots * kHeadUnroll) {
    if (h0 != slot) load(h0);
#pragma unroll
    for (int u = 0; u < kHeadUnroll; ++u) {
      if (h0 + u * slots >= heads) break;
      Vec<T, kVec> oa, ob;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if constexpr (V::kInterleave) {
          const float x = ToFloat(a[u].v[j]), y = ToFloat(a[u].v[j ^ 1]);
          const float cj = cs[j / 2], sj = sn[j / 2];
          oa.v[j] = FromFloat<T>(j % 2 == 0 ? x * cj - y * sj : x * cj + y * sj);
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
template <class V>
FLASHJIT_DEVICE void PassThrough(const RopeParams& p, int token, int lane) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec;
  const int rest = (p.head_dim - p.rotary_dim) / kVec;
  const int heads = p.num_q_heads + p.num_k_heads;
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

template <class V>
FLASHJIT_DEVICE void RopeWarp(const RopeParams& p) {
  constexpr int kVec = V::kVec, kPairs = Pairs<V>();
  static_assert(!V::kInterleave || kVec % 2 == 0, "interleaved pairs need kVec >= 2");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int chunks = V::kInterleave ? p.rotary_dim / kVec : p.rotary_dim / 2 / kVec;
  const bool one_chunk = chunks <= 32;
  const int slots = one_chunk ? 32 / chunks : 1;
  const int first_chunk = one_chunk ? lane % chunks : lane;
  const int slot = one_chunk ? lane / chunks : 0;
  const bool rotates = slot < slots && first_chunk < chunks;

  float freq[kPairs];
  if (rotates && one_chunk) Frequencies<V>(p, first_chunk * kPairs, freq);
  for (int token = blockIdx.x * V::kWarps + warp; token < p.nnz; token += gridDim.x * V::kWarps) {
    const int64_t pos = TokenPosition<V>(p, token, lane);  // the whole warp takes part
    if (rotates) {
      for (int c = first_chunk; c < chunks; c += 32) {
        if (!one_chunk) Frequencies<V>(p, c * kPairs, freq);
        RotateChunk<V>(p, token, c, pos, freq, slot, slots);
      }
    }
    if (p.head_dim > p.rotary_dim) PassThrough<V>(p, token, lane);
  }
}

// Tile kernel. Work item w of a tile = (token_in_tile * heads + head) * chunks + chunk, chunks =
// rotation chunks (as in RotateChunk) then pass-through chunks of kVec elements. Shared memory:
// cos [tile_tokens][angle_ld], sin [tile_tokens][angle_ld], (indptr) positions [tile_tokens].
template <class V>
FLASHJIT_DEVICE void RopeTile(const RopeParams& p) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kPairs = Pairs<V>(), kItems = V::kItems;
  constexpr int kThreads = V::kWarps * 32;
  constexpr int kLds = kPairs < 4 ? kPairs : 4;  // floats per shared-memory read
  static_assert(!V::kInterleave || kVec % 2 == 0, "interleaved pairs need kVec >= 2");
  extern __shared__ __align__(16) float rope_smem[];
  const int half = p.rotary_dim / 2, ld = p.angle_ld, tile = p.tile_tokens;
  const int rot_chunks = V::kInterleave ? p.rotary_dim / kVec : half / kVec;
  const int chunks = rot_chunks + (p.head_dim - p.rotary_dim) / kVec;
  const int heads = p.num_q_heads + p.num_k_heads;
  const int per_token = heads * chunks;
  float* cos_t = rope_smem;
  float* sin_t = rope_smem + tile * ld;
  int64_t* pos_t = reinterpret_cast<int64_t*>(rope_smem + 2 * tile * ld);

  for (int t0 = blockIdx.x * tile; t0 < p.nnz; t0 += gridDim.x * tile) {
    const int ntok = p.nnz - t0 < tile ? p.nnz - t0 : tile;
    const int items = ntok * per_token;
    Vec<T, kVec> a[kItems], b[kItems];
    int tl[kItems], hd[kItems], ch[kItems];
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int w = static_cast<int>(threadIdx.x) + u * kThreads;
      tl[u] = -1;
      if (w >= items) continue;
      const int row = w / chunks;
      ch[u] = w - row * chunks;
      tl[u] = row / heads;
      hd[u] = row - tl[u] * heads;
      const int token = t0 + tl[u], h = hd[u];
      const bool is_q = h < p.num_q_heads;
      const T* src = is_q ? HeadPtr<T>(p.q, token, h, p.q_layout)
                          : HeadPtr<T>(p.k, token, h - p.num_q_heads, p.k_layout);
      if (ch[u] < rot_chunks) {
        a[u] = LoadVecStreaming<T, kVec>(src + ch[u] * kVec);
        if constexpr (!V::kInterleave) b[u] = LoadVecStreaming<T, kVec>(src + ch[u] * kVec + half);
      } else {
        const T* dst = is_q ? HeadPtr<T>(p.q_out, token, h, p.q_out_layout)
                            : HeadPtr<T>(p.k_out, token, h - p.num_q_heads, p.k_out_layout);
        if (src != dst)
          a[u] = LoadVecStreaming<T, kVec>(src + p.rotary_dim + (ch[u] - rot_chunks) * kVec);
      }
    }
    // Angles of the tile's tokens, once per (token, frequency), while the loads are in flight.
    if constexpr (V::kMode == kIndptr) {
      const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
      for (int t = warp; t < ntok; t += V::kWarps) {
        const int64_t pos = TokenPosition<V>(p, t0 + t, lane);  // the whole warp takes part
        if (lane == 0) pos_t[t] = pos;
      }
      __syncthreads();
    }
    for (int i = threadIdx.x; i < ntok * half; i += kThreads) {
      const int t = i / half, f = i - t * half;
      int64_t pos;
      if constexpr (V::kMode == kIndptr) {
        pos = pos_t[t];
      } else {
        pos = static_cast<int64_t>(static_cast<const typename V::PosType*>(p.pos)[t0 + t]);
      }
      AngleAt<V>(p, pos, f, &cos_t[t * ld + f], &sin_t[t * ld + f]);
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      if (tl[u] < 0) continue;
      const int token = t0 + tl[u], h = hd[u];
      const bool is_q = h < p.num_q_heads;
      T* dst = is_q ? HeadPtr<T>(p.q_out, token, h, p.q_out_layout)
                    : HeadPtr<T>(p.k_out, token, h - p.num_q_heads, p.k_out_layout);
      if (ch[u] >= rot_chunks) {
        const T* src = is_q ? HeadPtr<T>(p.q, token, h, p.q_layout)
                            : HeadPtr<T>(p.k, token, h - p.num_q_heads, p.k_layout);
        if (src != dst) StoreVecStreaming(dst + p.rotary_dim + (ch[u] - rot_chunks) * kVec, a[u]);
        continue;
      }
      float cs[kPairs], sn[kPairs];
      const int f0 = tl[u] * ld + ch[u] * kPairs;
#pragma unroll
      for (int j = 0; j < kPairs; j += kLds) {
        const Vec<float, kLds> cv = *reinterpret_cast<const Vec<float, kLds>*>(cos_t + f0 + j);
        const Vec<float, kLds> sv = *reinterpret_cast<const Vec<float, kLds>*>(sin_t + f0 + j);
#pragma unroll
        for (int r = 0; r < kLds; ++r) {
          cs[j + r] = cv.v[r];
          sn[j + r] = sv.v[r];
        }
      }
      const int e0 = ch[u] * kVec;
      Vec<T, kVec> oa, ob;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if constexpr (V::kInterleave) {
          const float x = ToFloat(a[u].v[j]), y = ToFloat(a[u].v[j ^ 1]);
          const float cj = cs[j / 2], sj = sn[j / 2];
          oa.v[j] = FromFloat<T>(j % 2 == 0 ? x * cj - y * sj : x * cj + y * sj);
        } else {
          const float x = ToFloat(a[u].v[j]), y = ToFloat(b[u].v[j]);
          oa.v[j] = FromFloat<T>(x * cs[j] - y * sn[j]);
          ob.v[j] = FromFloat<T>(y * cs[j] + x * sn[j]);
        }
      }
      StoreVecStreaming(dst + e0, oa);
      if constexpr (!V::kInterleave) StoreVecStreaming(dst + e0 + half, ob);
    }
    __syncthreads();  // the next tile rewrites the tables
  }
}

// Row kernel. A token is taken by row_chunks * head_slots threads of one block: thread (chunk c,
// slot s) rotates chunk c (both NeoX halves, 16 B each at kVec 8, or kVec contiguous interleaved
// elements) of heads s, s + slots, ... of q then k, kItems heads loaded before any is stored.
// Chunks c >= rotary chunks copy the pass-through part (out of place). The chunk index is the
// fastest, so a warp's access covers whole consecutive head rows of one token. Frequencies are
// computed once per thread, the token's angles once per token, then reused over its heads.
// Blocks walk over tokens (grid of resident blocks).
template <class V>
FLASHJIT_DEVICE void RopeRow(const RopeParams& p) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kPairs = Pairs<V>(), kItems = V::kItems;
  constexpr int kThreads = V::kWarps * 32;
  static_assert(!V::kInterleave || kVec % 2 == 0, "interleaved pairs need kVec >= 2");
  const int per_token = p.row_chunks * p.head_slots;
  const int tokens_per_block = kThreads / per_token;  // host: >= 1
  const int t_in = static_cast<int>(threadIdx.x) / per_token;
  if (t_in >= tokens_per_block) return;
  const int r = static_cast<int>(threadIdx.x) - t_in * per_token;
  const int slot = r / p.row_chunks, c = r - slot * p.row_chunks;
  const int half = p.rotary_dim / 2;
  const int rot_chunks = V::kInterleave ? p.rotary_dim / kVec : half / kVec;
  const int heads = p.num_q_heads + p.num_k_heads, slots = p.head_slots;
  const bool rotates = c < rot_chunks;
  // Element offset of this thread's (first) access in a head row.
  const int e0 = rotates ? c * kVec : p.rotary_dim + (c - rot_chunks) * kVec;
  if (!rotates && p.q == p.q_out && p.k == p.k_out) return;  // in place: nothing to copy

  float freq[kPairs];
  if (rotates) Frequencies<V>(p, c * kPairs, freq);
  for (int token = blockIdx.x * tokens_per_block + t_in; token < p.nnz;
       token += gridDim.x * tokens_per_block) {
    const T* q_src = static_cast<const T*>(p.q) + token * p.q_layout.stride_token + e0;
    const T* k_src = static_cast<const T*>(p.k) + token * p.k_layout.stride_token + e0;
    T* q_dst = static_cast<T*>(p.q_out) + token * p.q_out_layout.stride_token + e0;
    T* k_dst = static_cast<T*>(p.k_out) + token * p.k_out_layout.stride_token + e0;
    int64_t pos = 0;
    if (rotates) pos = TokenPositionSearch<V>(p, token);
    float cs[kPairs], sn[kPairs];
    if (rotates) Angles<V>(p, pos, c * kPairs, freq, cs, sn);
    for (int h0 = slot; h0 < heads; h0 += slots * kItems) {
      Vec<T, kVec> a[kItems], b[kItems];
#pragma unroll
      for (int u = 0; u < kItems; ++u) {
        const int h = h0 + u * slots;
        if (h >= heads) break;
        const T* src = h < p.num_q_heads ? q_src + h * p.q_layout.stride_head
                                         : k_src + (h - p.num_q_heads) * p.k_layout.stride_head;
        a[u] = LoadVecStreaming<T, kVec>(src);
        if (!V::kInterleave && rotates) b[u] = LoadVecStreaming<T, kVec>(src + half);
      }
#pragma unroll
      for (int u = 0; u < kItems; ++u) {
        const int h = h0 + u * slots;
        if (h >= heads) break;
        T* dst = h < p.num_q_heads ? q_dst + h * p.q_out_layout.stride_head
                                   : k_dst + (h - p.num_q_heads) * p.k_out_layout.stride_head;
        if (!rotates) {
          StoreVecStreaming(dst, a[u]);
          continue;
        }
        Vec<T, kVec> oa, ob;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          if constexpr (V::kInterleave) {
            const float x = ToFloat(a[u].v[j]), y = ToFloat(a[u].v[j ^ 1]);
            const float cj = cs[j / 2], sj = sn[j / 2];
            oa.v[j] = FromFloat<T>(j % 2 == 0 ? x * cj - y * sj : x * cj + y * sj);
          } else {
            const float x = ToFloat(a[u].v[j]), y = ToFloat(b[u].v[j]);
            oa.v[j] = FromFloat<T>(x * cs[j] - y * sn[j]);
            ob.v[j] = FromFloat<T>(y * cs[j] + x * sn[j]);
          }
        }
        StoreVecStreaming(dst, oa);
        if constexpr (!V::kInterleave) StoreVecStreaming(dst + half, ob);
      }
    }
  }
}

template <class V>
__device__ void rope(const RopeParams& p) {
  if constexpr (V::kKernel == kRowKernel) {
    RopeRow<V>(p);
  } else if constexpr (V::kKernel == kTileKernel) {
    RopeTile<V>(p);
  } else {
    RopeWarp<V>(p);
  }
}

}  // namespace flashjit::rope
