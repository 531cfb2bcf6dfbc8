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

#include "common/pdl.cuh"
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

// Rotates one chunk by the angles of its pairs: interleaved (GPT-J) pairs (x[j], x[j ^ 1]) of
// `a`, or NeoX halves `a` (first) and `b` (second, into `ob`; unused when interleaved).
template <class V, class T, int kVec, int kPairs>
FLASHJIT_DEVICE void Rotate(const Vec<T, kVec>& a, const Vec<T, kVec>& b, const float (&cs)[kPairs],
                            const float (&sn)[kPairs], Vec<T, kVec>& oa, Vec<T, kVec>& ob) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    if constexpr (V::kInterleave) {
      const float x = ToFloat(a.v[j]), y = ToFloat(a.v[j ^ 1]);
      const float cj = cs[j / 2], sj = sn[j / 2];
      oa.v[j] = FromFloat<T>(j % 2 == 0 ? x * cj - y * sj : x * cj + y * sj);
    } else {
      const float x = ToFloat(a.v[j]), y = ToFloat(b.v[j]);
      oa.v[j] = FromFloat<T>(x * cs[j] - y * sn[j]);
      ob.v[j] = FromFloat<T>(y * cs[j] + x * sn[j]);
    }
  }
}

// Rotates chunk `c` of heads slot, slot + slots, ... of one token.
template <class V>
FLASHJIT_DEVICE void RotateChunk(const RopeParams& p, int token, int c, int64_t pos,
                                 const Turn (&turns)[Pairs<V>()], int slot, int slots) {
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
  Angles<V>(p, pos, c * kPairs, turns, cs, sn);
  for (int h0 = slot; h0 < heads; h0 += slots * kHeadUnroll) {
    if (h0 != slot) load(h0);
#pragma unroll
    for (int u = 0; u < kHeadUnroll; ++u) {
      if (h0 + u * slots >= heads) break;
      Vec<T, kVec> oa, ob;
      Rotate<V>(a[u], b[u], cs, sn, oa, ob);
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

  Turn turns[kPairs];
  if (rotates && one_chunk) Frequencies<V>(p, first_chunk * kPairs, turns);
  for (int token = blockIdx.x * V::kWarps + warp; token < p.nnz; token += gridDim.x * V::kWarps) {
    const int64_t pos = TokenPosition<V>(p, token, lane);  // the whole warp takes part
    if (rotates) {
      for (int c = first_chunk; c < chunks; c += 32) {
        if (!one_chunk) Frequencies<V>(p, c * kPairs, turns);
        RotateChunk<V>(p, token, c, pos, turns, slot, slots);
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
      Rotate<V>(a[u], b[u], cs, sn, oa, ob);
      StoreVecStreaming(dst + e0, oa);
      if constexpr (!V::kInterleave) StoreVecStreaming(dst + e0 + half, ob);
    }
    __syncthreads();  // the next tile rewrites the tables
  }
}

// kVec elements of a 16-bit T held as raw 32-bit words from the load to the math, for the row
// kernel: loaded into 16-bit values, each of ptxas's copies out of a load waited for its data
// right after the load was issued (with nothing else in flight yet).
template <class T>
struct IsHalf {
  static constexpr bool value = false;
};
template <>
struct IsHalf<half> {
  static constexpr bool value = true;
};

template <class T, int N>
struct Bits {
  static_assert(sizeof(T) == 2, "16-bit element types only");
  static constexpr bool kBf16 = !IsHalf<T>::value;
  static constexpr int kBytes = N * 2, kWords = kBytes >= 4 ? kBytes / 4 : 1;
  uint32_t w[kWords];

  FLASHJIT_DEVICE void Load(const T* p) {
    if constexpr (kBytes == 16) {
      const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p));
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else if constexpr (kBytes == 8) {
      const uint2 v = __ldcs(reinterpret_cast<const uint2*>(p));
      w[0] = v.x, w[1] = v.y;
    } else if constexpr (kBytes == 4) {
      w[0] = __ldcs(reinterpret_cast<const unsigned int*>(p));
    } else {
      w[0] = __ldcs(reinterpret_cast<const unsigned short*>(p));
    }
  }
  FLASHJIT_DEVICE void Store(T* p) const {
    if constexpr (kBytes == 16) {
      __stcs(reinterpret_cast<uint4*>(p), make_uint4(w[0], w[1], w[2], w[3]));
    } else if constexpr (kBytes == 8) {
      __stcs(reinterpret_cast<uint2*>(p), make_uint2(w[0], w[1]));
    } else if constexpr (kBytes == 4) {
      __stcs(reinterpret_cast<unsigned int*>(p), w[0]);
    } else {
      __stcs(reinterpret_cast<unsigned short*>(p), static_cast<unsigned short>(w[0]));
    }
  }
  // Element j as float (j a constant after unrolling).
  FLASHJIT_DEVICE float Get(int j) const {
    const uint32_t x = w[j / 2];
    if constexpr (kBf16) {
      return __uint_as_float(j % 2 ? x & 0xffff0000u : x << 16);
    } else {
      return __half2float(__ushort_as_half(static_cast<unsigned short>(j % 2 ? x >> 16 : x)));
    }
  }
  // Elements j, j + 1 (j even) from floats, rounded to nearest; N == 1: element 0 from x0.
  FLASHJIT_DEVICE void Set(int j, float x0, float x1) {
    if constexpr (N == 1) {
      if constexpr (kBf16) {
        w[0] = __bfloat16_as_ushort(__float2bfloat16_rn(x0));
      } else {
        w[0] = __half_as_ushort(__float2half_rn(x0));
      }
    } else if constexpr (kBf16) {
      const __nv_bfloat162 v = __floats2bfloat162_rn(x0, x1);
      w[j / 2] = *reinterpret_cast<const uint32_t*>(&v);
    } else {
      const __half2 v = __floats2half2_rn(x0, x1);
      w[j / 2] = *reinterpret_cast<const uint32_t*>(&v);
    }
  }
};

// Row kernel. A token is taken by row_chunks * head_slots threads of one block: thread (chunk c,
// slot s) rotates chunk c (both NeoX halves, 16 B each at kVec 8, or kVec contiguous interleaved
// elements) of heads s, s + slots, ... of q then k, kItems heads loaded before any is stored.
// Chunks c >= rotary chunks copy the pass-through part (out of place). The chunk index is the
// fastest, so a warp's access covers whole consecutive head rows of one token. Frequencies are
// computed once per thread, the token's angles once per token, then reused over its heads.
// Blocks walk over tokens (grid of resident blocks). Per token, the first kItems heads are
// loaded before the angles are computed, and the next token's position is loaded before this
// token's heads are stored, so neither waits on memory with nothing in flight.
template <class V>
FLASHJIT_DEVICE void RopeRow(const RopeParams& p) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kPairs = Pairs<V>(), kItems = V::kItems;
  constexpr int kThreads = V::kWarps * 32;
  static_assert(!V::kInterleave || kVec % 2 == 0, "interleaved pairs need kVec >= 2");
  // The turns of every frequency, once per block (shared memory: rotary_dim / 2 Turns).
  extern __shared__ __align__(16) float rope_smem[];
  Turn* const turn_table = reinterpret_cast<Turn*>(rope_smem);
  if constexpr (V::kMode != kCache) {
    for (int i = threadIdx.x; i < p.rotary_dim / 2; i += kThreads) turn_table[i] = Turns<V>(p, i);
    __syncthreads();
  }
  const int per_token = p.row_chunks * p.head_slots;
  const int tokens_per_block = kThreads / per_token;  // host: >= 1
  const int t_in = static_cast<int>(threadIdx.x) / per_token;
  if (t_in >= tokens_per_block) return;
  const int r = static_cast<int>(threadIdx.x) - t_in * per_token;
  const int slot = r / p.row_chunks, c = r - slot * p.row_chunks;
  const int half = p.rotary_dim / 2;
  const int rot_chunks = V::kInterleave ? p.rotary_dim / kVec : half / kVec;
  const int nq = p.num_q_heads, heads = nq + p.num_k_heads, slots = p.head_slots;
  const bool rotates = c < rot_chunks;
  // Element offset of this thread's (first) access in a head row.
  const int e0 = rotates ? c * kVec : p.rotary_dim + (c - rot_chunks) * kVec;
  const int b_off = rotates ? half : 0;                      // NeoX: the second half's chunk
  if (!rotates && p.q == p.q_out && p.k == p.k_out) return;  // in place: nothing to copy

  const Turn* turns = turn_table + c * kPairs;  // this thread's frequencies (not in cache mode)
  const int step = gridDim.x * tokens_per_block;
  int token = blockIdx.x * tokens_per_block + t_in;
  int64_t pos = rotates && token < p.nnz ? TokenPositionSearch<V>(p, token) : 0;
  for (; token < p.nnz; token += step) {
    const T* q_src = static_cast<const T*>(p.q) + token * p.q_layout.stride_token + e0;
    const T* k_src = static_cast<const T*>(p.k) + token * p.k_layout.stride_token + e0;
    T* q_dst = static_cast<T*>(p.q_out) + token * p.q_out_layout.stride_token + e0;
    T* k_dst = static_cast<T*>(p.k_out) + token * p.k_out_layout.stride_token + e0;
    // Every load is unconditional (heads past the last one reread it, pass-through threads read
    // their chunk twice): a load under a condition is merged into a[u] / b[u] under that
    // condition, which waits for the data right after the load is issued.
    Bits<T, kVec> a[kItems], b[kItems];
    auto load = [&](int h0) {
#pragma unroll
      for (int u = 0; u < kItems; ++u) {
        const int h = min(h0 + u * slots, heads - 1);
        const T* src =
            h < nq ? q_src + h * p.q_layout.stride_head : k_src + (h - nq) * p.k_layout.stride_head;
        a[u].Load(src);
        if constexpr (!V::kInterleave) b[u].Load(src + b_off);
      }
    };
    load(slot);  // in flight while the angles are computed
    float cs[kPairs], sn[kPairs];
    if (rotates) {
      Angles<V>(p, pos, c * kPairs, turns, cs, sn);
      if (token + step < p.nnz) pos = TokenPositionSearch<V>(p, token + step);
    }
    for (int h0 = slot;;) {
#pragma unroll
      for (int u = 0; u < kItems; ++u) {
        const int h = h0 + u * slots;
        if (h >= heads) break;
        T* dst = h < nq ? q_dst + h * p.q_out_layout.stride_head
                        : k_dst + (h - nq) * p.k_out_layout.stride_head;
        if (!rotates) {
          a[u].Store(dst);
          continue;
        }
        Bits<T, kVec> oa, ob;
#pragma unroll
        for (int j = 0; j < kVec; j += 2) {
          const int j1 = j + 1 < kVec ? j + 1 : j;  // kVec 1: NeoX only
          if constexpr (V::kInterleave) {
            const float x = a[u].Get(j), y = a[u].Get(j1);
            const float cj = cs[j / 2], sj = sn[j / 2];
            oa.Set(j, x * cj - y * sj, y * cj + x * sj);
          } else {
            const float x0 = a[u].Get(j), y0 = b[u].Get(j);
            const float x1 = a[u].Get(j1), y1 = b[u].Get(j1);
            oa.Set(j, x0 * cs[j] - y0 * sn[j], x1 * cs[j1] - y1 * sn[j1]);
            ob.Set(j, y0 * cs[j] + x0 * sn[j], y1 * cs[j1] + x1 * sn[j1]);
          }
        }
        oa.Store(dst);
        if constexpr (!V::kInterleave) ob.Store(dst + half);
      }
      h0 += slots * kItems;
      if (h0 >= heads) break;
      load(h0);
    }
  }
}

template <class V>
__device__ void rope(const RopeParams& p) {
  // PDL (common/pdl.cuh): nothing before the wait, as the in-place forms write what the previous
  // kernel may still read; the next kernel may launch once every CTA is past it.
  GridDependencyWait();
  GridLaunchDependents();
  if constexpr (V::kKernel == kRowKernel) {
    RopeRow<V>(p);
  } else if constexpr (V::kKernel == kTileKernel) {
    RopeTile<V>(p);
  } else {
    RopeWarp<V>(p);
  }
}

}  // namespace flashjit::rope
