// Append new K and V rows of a ragged batch into a paged cache.
//
// Variant:  DType (new k/v), CacheType (same, or fp8 e4m3 / e5m2), kThreads, kVec (elements per
// access), kItems (accesses per thread, loaded before any is stored), kResolve (resolve every
// item's page before the first store: the index chains of all items overlap each other and the
// row loads; otherwise each item's chain starts after the previous item's stores), kTokens
// (token-tile form), kLoop (token-tile form over a resident grid, see AppendTokenLoop).
// Work item w = ((token * heads) + head) * chunks + chunk, chunk = kVec elements of head_dim.
// Token t goes to page kv_indices[kv_indptr[b] + positions[t] / page_size], slot
// positions[t] % page_size, with b = batch_indices[t].
#pragma once

#include "common/pdl.cuh"
#include "common/vec.cuh"
#include "page/page_params.cuh"

namespace flashjit::page {

template <class C>
FLASHJIT_DEVICE C ToCache(float x) {
  if constexpr (sizeof(C) == 1) {
    return C(x);  // cuda_fp8 conversions saturate to the largest finite value
  } else {
    return FromFloat<C>(x);
  }
}

// The item's new k and v chunks (kVec elements of `head` at element offset e of `token`).
template <class T, int kVec>
FLASHJIT_DEVICE void LoadItem(const AppendKvParams& p, int token, int head, int e, Vec<T, kVec>& k,
                              Vec<T, kVec>& v) {
  k = LoadVecStreaming<T, kVec>(static_cast<const T*>(p.key) + token * p.key_stride_token +
                                head * p.key_stride_head + e);
  v = LoadVecStreaming<T, kVec>(static_cast<const T*>(p.value) + token * p.value_stride_token +
                                head * p.value_stride_head + e);
}

// Stores one item's chunks at kd / vd in the cache type (fp8: scaled by 1 / k or v scale).
template <class C, class T, int kVec>
FLASHJIT_DEVICE void StoreItem(const AppendKvParams& p, C* kd, C* vd, const Vec<T, kVec>& k,
                               const Vec<T, kVec>& v) {
  if constexpr (sizeof(C) == 1) {
    Vec<C, kVec> kc, vc;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      kc.v[j] = ToCache<C>(ToFloat(k.v[j]) * p.k_rcp_scale);
      vc.v[j] = ToCache<C>(ToFloat(v.v[j]) * p.v_rcp_scale);
    }
    StoreVecStreaming(kd, kc);
    StoreVecStreaming(vd, vc);
  } else {
    StoreVecStreaming(kd, k);
    StoreVecStreaming(vd, v);
  }
}

template <class V>
FLASHJIT_DEVICE void AppendPerItem(const AppendKvParams& p) {
  using T = typename V::DType;
  using C = typename V::CacheType;
  constexpr int kVec = V::kVec, kItems = V::kItems, kThreads = V::kThreads;
  // REQUIRES (host): nnz * heads * chunks < 2^31, so 32-bit index math is exact.
  const int chunks = p.head_dim / kVec;
  const int per_token = p.num_heads * chunks;
  const int total = per_token * p.nnz;

  Vec<T, kVec> k[kItems], v[kItems];
  int token[kItems], head[kItems], e[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int w = (blockIdx.x * kItems + i) * kThreads + threadIdx.x;
    token[i] = w < total ? w / per_token : -1;
    if (token[i] < 0) continue;
    const int within = w - token[i] * per_token;
    head[i] = within / chunks;
    e[i] = (within - head[i] * chunks) * kVec;
    LoadItem(p, token[i], head[i], e[i], k[i], v[i]);
  }
  // kResolve: batch index and position are loaded beside the rows, then kv_indptr and
  // kv_indices for all items; all loads come before any store, so none waits on a store.
  int page_of[kItems], slot_of[kItems];
  if constexpr (V::kResolve) {
    int b[kItems], pos[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      b[i] = token[i] < 0 ? 0 : p.batch_indices[token[i]];
      pos[i] = token[i] < 0 ? 0 : p.positions[token[i]];
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) b[i] = token[i] < 0 ? 0 : p.kv_indptr[b[i]];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int q = pos[i] / p.page_size;
      slot_of[i] = pos[i] - q * p.page_size;
      page_of[i] = token[i] < 0 ? 0 : p.kv_indices[b[i] + q];
    }
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (token[i] < 0) continue;
    int64_t page;
    int slot;
    if constexpr (V::kResolve) {
      page = page_of[i];
      slot = slot_of[i];
    } else {
      const int pos = p.positions[token[i]];
      page = p.kv_indices[p.kv_indptr[p.batch_indices[token[i]]] + pos / p.page_size];
      slot = pos % p.page_size;
    }
    C* kd = static_cast<C*>(p.k_cache) + page * p.k_layout.stride_page +
            slot * p.k_layout.stride_slot + head[i] * p.k_layout.stride_head + e[i];
    C* vd = static_cast<C*>(p.v_cache) + page * p.v_layout.stride_page +
            slot * p.v_layout.stride_slot + head[i] * p.v_layout.stride_head + e[i];
    StoreItem(p, kd, vd, k[i], v[i]);
  }
}

// Token-tile form (kTokens): the block's work items span tokens t0 .. t0 + ntok - 1; every
// thread issues its row loads first, then threads 0 .. ntok - 1 resolve one token each (batch
// index and position -> kv_indptr -> kv_indices) into shared memory while those loads are in
// flight; after one barrier every item reads its page and slot offset from shared memory. Each
// token's index chain runs once per block instead of once per item, and no store waits on it
// alone. Shared memory: 2 * ntok_max int64 element offsets (k, v) of the slot rows.
template <class V>
FLASHJIT_DEVICE void AppendTokenTile(const AppendKvParams& p) {
  using T = typename V::DType;
  using C = typename V::CacheType;
  constexpr int kVec = V::kVec, kItems = V::kItems, kThreads = V::kThreads;
  extern __shared__ __align__(16) int64_t append_smem[];
  const int chunks = p.head_dim / kVec;
  const int per_token = p.num_heads * chunks;
  const int total = per_token * p.nnz;
  const int first = blockIdx.x * kItems * kThreads;
  const int t0 = first / per_token;
  const int last = min(first + kItems * kThreads, total) - 1;
  const int ntok = last / per_token - t0 + 1;
  int64_t* k_row = append_smem;
  int64_t* v_row = append_smem + p.tile_tokens;

  Vec<T, kVec> k[kItems], v[kItems];
  int tl[kItems], hoff[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int w = first + i * kThreads + static_cast<int>(threadIdx.x);
    tl[i] = -1;
    if (w > last) continue;
    const int token = w / per_token;
    const int within = w - token * per_token;
    const int head = within / chunks;
    const int e = (within - head * chunks) * kVec;
    tl[i] = token - t0;
    hoff[i] = head * 65536 + e;  // head < 2^15 and e < 2^16 (host)
    LoadItem(p, token, head, e, k[i], v[i]);
  }
  for (int t = threadIdx.x; t < ntok; t += kThreads) {
    const int token = t0 + t;
    const int b = p.batch_indices[token], pos = p.positions[token];
    const int q = pos / p.page_size;
    const int slot = pos - q * p.page_size;
    const int64_t page = p.kv_indices[p.kv_indptr[b] + q];
    k_row[t] = page * p.k_layout.stride_page + slot * p.k_layout.stride_slot;
    v_row[t] = page * p.v_layout.stride_page + slot * p.v_layout.stride_slot;
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (tl[i] < 0) continue;
    const int head = hoff[i] >> 16, e = hoff[i] & 0xffff;
    C* kd = static_cast<C*>(p.k_cache) + k_row[tl[i]] + head * p.k_layout.stride_head + e;
    C* vd = static_cast<C*>(p.v_cache) + v_row[tl[i]] + head * p.v_layout.stride_head + e;
    StoreItem(p, kd, vd, k[i], v[i]);
  }
}

// One thread's work item in the token-loop form: token, head and chunk, advanced from tile to
// tile by the grid stride with carries (no integer division inside the loop).
struct ItemCursor {
  int token, head, chunk;
};

// Token-tile form over a resident grid (kLoop): block b takes tiles b, b + G, b + 2G, ... (a tile
// = kItems * kThreads work items, as in AppendTokenTile). Software-pipelined: while tile n is
// stored, tile n + 1's rows are already loaded into a second set of registers and its tokens'
// batch index / position loads are in flight; its pages are then resolved into the other half of
// a double-buffered shared-memory table; one barrier per tile. Each block resolves
// min(tile_tokens, nnz - t0) tokens from the tile's first token t0 (a bound on the tokens a tile
// spans; a few extra lookups of valid tokens, no division for the exact count).
// Shared memory: 2 buffers x (k, v) x tile_tokens int64 element offsets.
template <class V>
FLASHJIT_DEVICE void AppendTokenLoop(const AppendKvParams& p) {
  using T = typename V::DType;
  using C = typename V::CacheType;
  constexpr int kVec = V::kVec, kItems = V::kItems, kThreads = V::kThreads;
  constexpr int kTile = kItems * kThreads;
  extern __shared__ __align__(16) int64_t append_smem[];
  const int chunks = p.head_dim / kVec;
  const int per_token = p.num_heads * chunks;
  // REQUIRES (host): nnz * per_token + kTile < 2^31 and gridDim.x * kTile < 2^31.
  const int tiles = (per_token * p.nnz + kTile - 1) / kTile;
  int tile = blockIdx.x;
  if (tile >= tiles) return;  // whole block: no barrier is skipped by part of it
  const int span = p.tile_tokens;

  // Grid stride in (tokens, heads, chunks), each part below its radix, so one carry each.
  const int stride = static_cast<int>(gridDim.x) * kTile;
  const int d_tok = stride / per_token, d_rem = stride - d_tok * per_token;
  const int d_head = d_rem / chunks, d_chunk = d_rem - d_head * chunks;
  auto advance = [&](ItemCursor& c) {
    c.chunk += d_chunk;
    c.head += d_head;
    c.token += d_tok;
    if (c.chunk >= chunks) {
      c.chunk -= chunks;
      ++c.head;
    }
    if (c.head >= p.num_heads) {
      c.head -= p.num_heads;
      ++c.token;
    }
  };
  ItemCursor item[kItems];
  ItemCursor first;  // the tile's first item: its token is t0
#pragma unroll
  for (int i = 0; i <= kItems; ++i) {
    const int w = tile * kTile + (i < kItems ? i * kThreads + static_cast<int>(threadIdx.x) : 0);
    ItemCursor c;
    c.token = w / per_token;
    const int within = w - c.token * per_token;
    c.head = within / chunks;
    c.chunk = within - c.head * chunks;
    if (i < kItems) {
      item[i] = c;
    } else {
      first = c;
    }
  }
  auto load = [&](Vec<T, kVec>* k, Vec<T, kVec>* v) {
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (item[i].token < p.nnz)
        LoadItem(p, item[i].token, item[i].head, item[i].chunk * kVec, k[i], v[i]);
  };
  // Slot-row offsets of token t0 + t, for t = from, from + kThreads, ... < n, into buffer `buf`.
  auto resolve = [&](int t0, int n, int from, int buf) {
    int64_t* k_row = append_smem + 2 * buf * span;
    int64_t* v_row = k_row + span;
    for (int t = from; t < n; t += kThreads) {
      const int token = t0 + t;
      const int b = p.batch_indices[token], pos = p.positions[token];
      const int q = pos / p.page_size;
      const int slot = pos - q * p.page_size;
      const int64_t page = p.kv_indices[p.kv_indptr[b] + q];
      k_row[t] = page * p.k_layout.stride_page + slot * p.k_layout.stride_slot;
      v_row[t] = page * p.v_layout.stride_page + slot * p.v_layout.stride_slot;
    }
  };

  Vec<T, kVec> k[kItems], v[kItems];
  load(k, v);
  int t0 = first.token;
  resolve(t0, min(span, p.nnz - t0), threadIdx.x, 0);
  __syncthreads();
  for (int buf = 0;; buf ^= 1) {
    // This tile's store targets, before the cursors move on.
    int tl[kItems], hoff[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      tl[i] = item[i].token < p.nnz ? item[i].token - t0 : -1;
      hoff[i] = item[i].head * 65536 + item[i].chunk * kVec;  // head < 2^15, e < 2^16 (host)
    }
    const bool more = tile + static_cast<int>(gridDim.x) < tiles;
    Vec<T, kVec> nk[kItems], nv[kItems];
    int nt0 = 0, nn = 0, b0 = 0, pos0 = 0;
    if (more) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) advance(item[i]);
      advance(first);
      load(nk, nv);
      nt0 = first.token;
      nn = min(span, p.nnz - nt0);
      if (static_cast<int>(threadIdx.x) < nn) {  // the first step of the next chain, in flight
        b0 = p.batch_indices[nt0 + threadIdx.x];
        pos0 = p.positions[nt0 + threadIdx.x];
      }
    }
    const int64_t* k_row = append_smem + 2 * buf * span;
    const int64_t* v_row = k_row + span;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (tl[i] < 0) continue;
      const int head = hoff[i] >> 16, e = hoff[i] & 0xffff;
      C* kd = static_cast<C*>(p.k_cache) + k_row[tl[i]] + head * p.k_layout.stride_head + e;
      C* vd = static_cast<C*>(p.v_cache) + v_row[tl[i]] + head * p.v_layout.stride_head + e;
      StoreItem(p, kd, vd, k[i], v[i]);
    }
    if (!more) break;
    if (static_cast<int>(threadIdx.x) < nn) {
      const int t = threadIdx.x, nb = buf ^ 1;
      const int q = pos0 / p.page_size;
      const int slot = pos0 - q * p.page_size;
      const int64_t page = p.kv_indices[p.kv_indptr[b0] + q];
      append_smem[2 * nb * span + t] =
          page * p.k_layout.stride_page + slot * p.k_layout.stride_slot;
      append_smem[(2 * nb + 1) * span + t] =
          page * p.v_layout.stride_page + slot * p.v_layout.stride_slot;
    }
    resolve(nt0, nn, threadIdx.x + kThreads, buf ^ 1);  // tiles spanning > kThreads tokens
    __syncthreads();  // buffer buf ^ 1 complete; every thread is done reading buffer buf
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      k[i] = nk[i];
      v[i] = nv[i];
    }
    t0 = nt0;
    tile += gridDim.x;
  }
}

template <class V>
__device__ void append_paged_kv(const AppendKvParams& p) {
  // PDL (common/pdl.cuh): nothing before the wait, as the in-place forms write what the previous
  // kernel may still read; the next kernel may launch once every CTA is past it.
  GridDependencyWait();
  GridLaunchDependents();
  if constexpr (V::kLoop) {
    AppendTokenLoop<V>(p);
  } else if constexpr (V::kTokens) {
    AppendTokenTile<V>(p);
  } else {
    AppendPerItem<V>(p);
  }
}

// One block per request.
template <class V>
__device__ void batch_indices_positions(const BatchPositionsParams& p) {
  // PDL (common/pdl.cuh): nothing before the wait, as the in-place forms write what the previous
  // kernel may still read; the next kernel may launch once every CTA is past it.
  GridDependencyWait();
  GridLaunchDependents();
  const int b = blockIdx.x;
  const int begin = p.append_indptr[b], end = p.append_indptr[b + 1];
  const int first = p.seq_lens[b] - (end - begin);
  for (int j = begin + static_cast<int>(threadIdx.x); j < end; j += V::kThreads) {
    p.batch_indices[j] = b;
    p.positions[j] = first + (j - begin);
  }
}

}  // namespace flashjit::page
