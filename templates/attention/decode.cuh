// Decode attention over a paged (or contiguous) KV cache: one CTA per (work item, kv head,
// tile of 16 query heads), 4 warps, a cp.async pipeline of kStages tiles of 64 keys.
//
// Variant: DTypeQ (q, out and the tensor-core type), DTypeKV (16-bit = DTypeQ, or fp8),
// kHeadDim, kStages, kSoftCap, kAlibi, kRope.
#pragma once

#include "attention/decode_epilogue.cuh"
#include "attention/decode_warp.cuh"
#include "attention/kv_prep.cuh"

namespace flashjit::attention {

// The work item of this CTA: from the plan, or the uniform split of a single request.
FLASHJIT_DEVICE DecodeWorkItem ThisWorkItem(const DecodeParams& p, int item) {
  if (p.work) return p.work[item];
  DecodeWorkItem w;
  w.request = 0;
  w.page_begin = 0;
  w.kv_len = p.single_kv_len;
  w.kv_start = item * p.single_chunk;
  w.kv_end = min(p.single_kv_len, w.kv_start + p.single_chunk);
  w.partial = DecodeGridItems(p) > 1 ? item : -1;
  w.merge = -1;
  return w;
}

// Stages the CTA's query rows (16, D) into swizzled shared memory, zero past the group, with
// RoPE at position qpos when the variant has it.
template <class V>
FLASHJIT_DEVICE void LoadQuery(const DecodeParams& p, const DecodeWorkItem& w, int qh0, int rows,
                               int qpos, typename V::DTypeQ* q_smem) {
  using T = typename V::DTypeQ;
  constexpr int kD = V::kHeadDim, kChunks = kD / 8, kHalf = kChunks / 2;
  const T* q = static_cast<const T*>(p.q) + w.request * p.q_stride_b;
  for (int idx = threadIdx.x; idx < kDecodeQTile * kHalf; idx += kDecodeThreads) {
    const int row = idx / kHalf, c = idx % kHalf;
    Vec<T, 8> a = {}, b = {};
    if (row < rows) {
      const T* src = q + (qh0 + row) * p.q_stride_h;
      a = LoadVec<T, 8>(src + c * 8);
      b = LoadVec<T, 8>(src + (c + kHalf) * 8);
      if constexpr (V::kRope) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          float cs, sn;
          RopeAngle(qpos, c * 8 + j, kD, p.rope_rcp_scale, p.rope_log2_theta, cs, sn);
          const float x = ToFloat(a.v[j]), y = ToFloat(b.v[j]);
          a.v[j] = FromFloat<T>(x * cs - y * sn);
          b.v[j] = FromFloat<T>(y * cs + x * sn);
        }
      }
    }
    *reinterpret_cast<Vec<T, 8>*>(q_smem + SwizzledChunk<kChunks>(row, c) * 8) = a;
    *reinterpret_cast<Vec<T, 8>*>(q_smem + SwizzledChunk<kChunks>(row, c + kHalf) * 8) = b;
  }
}

template <class V>
__device__ void decode_attention(const DecodeParams& p) {
  using T = typename V::DTypeQ;
  using TKV = typename V::DTypeKV;
  constexpr int kD = V::kHeadDim, kStages = V::kStages, kTile = kDecodeTileKV;
  // fp8 with RoPE: each warp converts its keys and values into 16-bit rows in shared memory
  // (the rotation needs them); other fp8 variants convert in registers (DecodeWarp::kFp8Regs).
  constexpr bool kConvert = sizeof(TKV) == 1 && V::kRope;
  static_assert(kStages >= 2, "the pipeline needs at least two stages");
  using Loader = PagedTileLoader<TKV, kD, kTile, kDecodeThreads>;

  // The item is read before the count (the grid never exceeds the workspace's capacity), so
  // that the two loads overlap.
  const int item = DecodeCtaItem(p), head_tile = DecodeCtaHeadTile(p);
  const DecodeWorkItem w = ThisWorkItem(p, item);
  const int num_items = p.num_work ? *p.num_work : DecodeGridItems(p);
  if (item >= num_items) return;  // graph mode: fixed grid
  const int kv_head = head_tile / p.q_tiles;
  const int qh0 = kv_head * p.group_size + (head_tile % p.q_tiles) * kDecodeQTile;
  const int rows = min(kDecodeQTile, p.group_size - (head_tile % p.q_tiles) * kDecodeQTile);
  const int qpos = w.kv_len - 1;
  const int key_lo = p.window_left >= 0 ? max(w.kv_start, qpos - p.window_left) : w.kv_start;

  extern __shared__ __align__(128) char smem[];
  constexpr int kRegionA = DecodePipelineBytes(kD, sizeof(TKV), kStages) > DecodeEpilogueBytes(kD)
                               ? DecodePipelineBytes(kD, sizeof(TKV), kStages)
                               : DecodeEpilogueBytes(kD);
  T* q_smem = reinterpret_cast<T*>(smem + kRegionA);
  T* convert = q_smem + kDecodeQTile * kD;  // kConvert only: (4 warps, K/V, 16, D)
  auto k_stage = [&](int s) { return smem + s * 2 * Loader::kTileBytes; };
  auto v_stage = [&](int s) { return smem + (s * 2 + 1) * Loader::kTileBytes; };

  // A split request's merge item, read now so that the tail does not wait for it.
  DecodeMergeItem merge_item = {};
  if (w.merge >= 0 && p.merge_counters) merge_item = p.merge_items[w.merge];

  // Prologue: the page ids of the first kStages - 1 tiles (all loads in flight together), their
  // copies, the page ids of the next tile, then the query.
  Loader loader;
  loader.Init(p, w, kv_head);
  const int n_tiles = (w.kv_end - w.kv_start + kTile - 1) / kTile;
  {
    int32_t pages[kStages - 1][Loader::kRows];
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s)
      if (s < n_tiles) loader.LoadPages(w.kv_start + s * kTile, pages[s]);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < n_tiles) loader.IssueTile(w.kv_start + s * kTile, pages[s], k_stage(s), v_stage(s));
      CpAsyncCommit();
    }
  }
  if (kStages - 1 < n_tiles) loader.PrefetchPages(w.kv_start + (kStages - 1) * kTile);
  LoadQuery<V>(p, w, qh0, rows, qpos, q_smem);
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  DecodeWarp<V> state;
  state.Init(q_smem);
  if constexpr (V::kAlibi) {
    const int r0 = lane / 4, r1 = lane / 4 + 8;
    state.slope[0] = r0 < rows ? AlibiSlope(qh0 + r0, p.num_qo_heads) : 0.f;
    state.slope[1] = r1 < rows ? AlibiSlope(qh0 + r1, p.num_qo_heads) : 0.f;
  } else {
    state.slope[0] = state.slope[1] = 0.f;
  }

  // Main loop: wait for tile t, refill the stage freed by tile t - 1, compute tile t.
  for (int t = 0; t < n_tiles; ++t) {
    CpAsyncWait<kStages - 2>();
    __syncthreads();
    const int next = t + kStages - 1;
    if (next < n_tiles) {
      loader.IssueTile(w.kv_start + next * kTile, k_stage(next % kStages), v_stage(next % kStages));
      if (next + 1 < n_tiles) loader.PrefetchPages(w.kv_start + (next + 1) * kTile);
    }
    CpAsyncCommit();

    const int key0 = w.kv_start + t * kTile + warp * 16;
    if (key0 >= w.kv_end || key0 + 16 <= key_lo) continue;  // nothing of this warp's 16 keys
    const char* k_src = k_stage(t % kStages) + warp * 16 * kD * sizeof(TKV);
    const char* v_src = v_stage(t % kStages) + warp * 16 * kD * sizeof(TKV);
    const void* k_rows;
    const void* v_rows;
    if constexpr (kConvert) {
      T* k_conv = convert + warp * 2 * 16 * kD;
      T* v_conv = k_conv + 16 * kD;
      ConvertRows<T, TKV, kD>(k_src, k_conv);
      ConvertRows<T, TKV, kD>(v_src, v_conv);
      k_rows = k_conv;
      v_rows = v_conv;
    } else {
      k_rows = k_src;
      v_rows = v_src;
    }
    if constexpr (V::kRope) {
      __syncwarp();
      RopeRows<T, kD>(const_cast<T*>(static_cast<const T*>(k_rows)), key0, p.rope_rcp_scale,
                      p.rope_log2_theta);
    }
    if constexpr (kConvert || V::kRope) __syncwarp();
    state.Step(p, k_rows, v_rows, key0, key_lo, w.kv_end, qpos);
  }
  CpAsyncWait<0>();
  __syncthreads();
  state.ReduceRowSums();
  DecodeEpilogue<V>(p, w, merge_item, state, qh0, rows, reinterpret_cast<float*>(smem),
                    reinterpret_cast<float*>(q_smem));
}

}  // namespace flashjit::attention
