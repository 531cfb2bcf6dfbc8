// The end of a decode CTA: merge the four warps' softmax states through shared memory, then
// write the normalised output and LSE (or, for a split request, the partial result of this
// work item for the merge kernel).
#pragma once

#include "attention/decode_merge.cuh"
#include "attention/decode_warp.cuh"
#include "common/cluster_sm90.cuh"
#include "common/vec.cuh"

namespace flashjit::attention {

// ld.shared::cluster of 4 floats at a cluster shared-memory address (16-byte aligned).
FLASHJIT_DEVICE float4 LdSharedClusterF32x4(uint32_t addr) {
#if FLASHJIT_CLUSTER_PTX
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
#else
  __trap();
  return make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

// out[request, qh, c4 .. c4 + 3] = acc * scale, and the row's base-2 LSE from the thread of
// column 0: the final store of a row that needs no further merge.
template <class T>
FLASHJIT_DEVICE void StoreOutput4(const DecodeParams& p, int request, int qh, int c4, float4 acc,
                                  float scale, float lse2) {
  Vec<T, 4> o;
  o.v[0] = FromFloat<T>(acc.x * scale);
  o.v[1] = FromFloat<T>(acc.y * scale);
  o.v[2] = FromFloat<T>(acc.z * scale);
  o.v[3] = FromFloat<T>(acc.w * scale);
  StoreVec(static_cast<T*>(p.out) + request * p.o_stride_b + qh * p.o_stride_h + c4, o);
  if (c4 == 0 && p.lse) p.lse[request * p.lse_stride_b + qh] = lse2;
}

// Layouts of the epilogue's (4 warps x 16 rows, D) floats. Each keeps a warp's writes of its
// accumulators and the float4 reads of a row (8 lanes: 8 consecutive 16-byte chunks of a row)
// free of bank conflicts.
// - kPadded: rows padded to D + 8 floats (16-bit KV: float2 writes of 8 rows).
// - kSwizzled: rows of D floats whose 32-byte segments (8 floats) are XOR-swizzled by row % 8:
//   the persistent CTA's epilogue, which must fit one pipeline stage.
// - kFp8: rows of D floats whose 16-byte chunks are XOR-swizzled within blocks of 8 chunks by
//   the block and the row's parity: the fp8 kernel's accumulators hold D / 8 consecutive columns
//   of a row (DecodeWarp::Fp8OutColumn), written as float4; lanes 8q .. 8q + 7 of such a write are
//   rows 2q, 2q + 1 at the column groups of t = 0..3, which the swizzle spreads over the 8
//   chunks of a bank row (session 20: the padded layout's scalar writes were 8-way conflicts).
enum class EpilogueLayout { kPadded, kSwizzled, kFp8 };

template <int kD, EpilogueLayout kLayout>
FLASHJIT_DEVICE int EpilogueIndex(int row, int col) {
  if constexpr (kLayout == EpilogueLayout::kSwizzled) {
    return row * kD + (((col >> 3) ^ (row & 7)) << 3) + (col & 7);
  } else if constexpr (kLayout == EpilogueLayout::kFp8) {
    static_assert(kD == 64 || kD == 128 || kD == 256, "head_dim of the fp8 epilogue");
    const int chunk = col >> 2, block = chunk >> 3;
    const int s = kD == 64    ? (block & 1) | ((row & 1) << 1)
                  : kD == 128 ? (block & 3) | ((row & 1) << 2)
                              : ((block >> 1) & 3) | ((row & 1) << 2);
    return row * kD + ((chunk ^ s) << 2) + (col & 3);
  } else {
    return row * (kD + 8) + col;
  }
}

// The layout of a decode kernel's epilogue (kPersistent: the persistent CTA's). fp8 at D 256
// keeps the padded rows and scalar writes, with its loader's earlier form (PagedTileLoader::
// kDivideEachRow): with the new forms, Gemma-2's fp8 read 5-17 % slower (session 20, calls 2-3).
template <class V, bool kPersistent>
constexpr EpilogueLayout kEpilogueLayout =
    kPersistent                                      ? EpilogueLayout::kSwizzled
    : V::kHeadDim <= 128 && DecodeWarp<V>::kFp8RegsV ? EpilogueLayout::kFp8
                                                     : EpilogueLayout::kPadded;

// Cluster plans (items marked kDecodePartialCluster): the p.cluster CTAs of this cluster hold
// the normalised partial outputs (rows x D floats at `o`, in the epilogue's layout) and base-2 LSEs
// (`row_lse`) of the chunks of one (request, head tile) in their shared memory; each CTA merges a
// share of the (row, 4 columns) elements from all of them and writes out and lse (sinks join here).
// No global round trip: two cluster barriers and the distributed shared-memory loads.
template <class V>
FLASHJIT_DEVICE void ClusterMerge(const DecodeParams& p, const DecodeWorkItem& w, int qh0, int rows,
                                  const float* o, const float* row_lse) {
  using T = typename V::DTypeQ;
  // Up to 16 CTAs (a non-portable cluster size on sm_90, see DecodeMaxCluster), read in batches
  // of 8 (all loads of a batch in flight together) with the running (max, sum, acc) rescaled
  // between batches; a plan of at most 8 chunks takes one batch, the arithmetic of session 5.
  constexpr int kD = V::kHeadDim, kBatch = 8;
  constexpr EpilogueLayout kLayout = kEpilogueLayout<V, false>;
  const int n = p.cluster;
  ClusterSync();  // every CTA's partial is in its shared memory
  const int rank = static_cast<int>(ClusterCtaRank());
  for (int idx = rank + n * static_cast<int>(threadIdx.x); idx < rows * (kD / 4);
       idx += n * kDecodeThreads) {
    const int r = idx / (kD / 4), c4 = (idx % (kD / 4)) * 4;
    float m = NegInf(), total = 0.f;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int base = 0; base < n; base += kBatch) {
      float lse_i[kBatch];
      float4 x[kBatch];
      float mb = m;
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        if (base + i < n) {
          lse_i[i] = __uint_as_float(LdSharedClusterU32(MapaSharedCluster(row_lse + r, base + i)));
          x[i] = LdSharedClusterF32x4(
              MapaSharedCluster(o + EpilogueIndex<kD, kLayout>(r, c4), base + i));
          mb = fmaxf(mb, lse_i[i]);
        }
      }
      if (base > 0) {  // rescale what the earlier batches summed to the new maximum
        const float s = ScoreWeight(m, mb, 1.f);
        total *= s;
        acc.x *= s;
        acc.y *= s;
        acc.z *= s;
        acc.w *= s;
      }
      m = mb;
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        if (base + i < n) {
          const float e = ScoreWeight(lse_i[i], m, 1.f);  // 0 for an empty chunk
          total += e;
          acc.x += e * x[i].x;
          acc.y += e * x[i].y;
          acc.z += e * x[i].z;
          acc.w += e * x[i].w;
        }
      }
    }
    const int qh = qh0 + r;
    float lse2 = StateLse(m, total, 1.f);
    float scale = total > 0.f ? 1.f / total : 0.f;
    if (p.sinks) scale *= AddSink(lse2, p.sinks[qh]);
    StoreOutput4<T>(p, w.request, qh, c4, acc, scale, lse2);
  }
  ClusterSync();  // no CTA leaves while another reads its shared memory
}

// Plans with a split request: the CTA that writes the last partial of (request, this CTA's
// query heads) merges them. Counters return to 0 for the next launch (graph replays).
// `item` is p.merge_items[w.merge].
template <class V>
FLASHJIT_DEVICE void FusedMerge(const DecodeParams& p, const DecodeWorkItem& w,
                                const DecodeMergeItem& item, int head_tile, int qh0, int rows) {
  using T = typename V::DTypeQ;
  __shared__ int is_last;
  __threadfence();  // this CTA's partials are visible before the count says so
  __syncthreads();
  int32_t* counter = p.merge_counters + w.merge * DecodeHeadTiles(p) + head_tile;
  if (threadIdx.x == 0) {
    is_last = atomicAdd(counter, 1) == item.num_partials - 1;
    if (is_last) {
      *counter = 0;  // every other CTA of this group has counted
      if constexpr (V::kSteal) {
        // ... and has made its last claim: the request's claim words return to 0.
        for (int j = 0; j + 1 < item.num_partials; j += 2)
          p.claims[static_cast<int64_t>(item.first_partial + j) * DecodeHeadTiles(p) + head_tile] =
              0;
      }
    }
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  for (int r = threadIdx.x / 32; r < rows; r += kDecodeThreads / 32) {
    const int qh = qh0 + r;
    MergeHeadWarp<V>(p.partial_o, p.partial_lse, item.first_partial, item.num_partials,
                     p.num_qo_heads, qh,
                     static_cast<T*>(p.out) + item.request * p.o_stride_b + qh * p.o_stride_h,
                     p.lse ? p.lse + item.request * p.lse_stride_b + qh : nullptr, p.sinks);
  }
}

// REQUIRES: every warp has finished with the pipeline's shared memory (a barrier before).
// o_smem holds (4 warps, 16, D + 8) floats (kSwizzled, kFp8: (4, 16, D); see EpilogueIndex);
// stats holds (4 * 16 * 2 + 4 * 16 + 16) floats. merge_item: p.merge_items[w.merge] when the
// item is split and merged in place. head_tile: the (kv head, query tile) of this CTA's work.
template <class V, bool kPersistent = false>
FLASHJIT_DEVICE void DecodeEpilogue(const DecodeParams& p, const DecodeWorkItem& w,
                                    const DecodeMergeItem& merge_item, const DecodeWarp<V>& st,
                                    int head_tile, int qh0, int rows, float* o_smem, float* stats) {
  using T = typename V::DTypeQ;
  constexpr int kD = V::kHeadDim, kWarps = kDecodeThreads / 32;
  constexpr EpilogueLayout kLayout = kEpilogueLayout<V, kPersistent>;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  auto at = [](int row, int col) { return EpilogueIndex<kD, kLayout>(row, col); };

  // Each warp's unnormalised O and its (m, l) per row.         (4, 16, D)
  // Rows 8..15 (the accumulators' c = 2, 3) only where the CTA has more than 8 query rows.
  const int row0 = warp * kDecodeQTile;
  if constexpr (DecodeWarp<V>::kFp8RegsV && kLayout == EpilogueLayout::kPadded) {
#pragma unroll
    for (int j = 0; j < kD / 8; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        if (c >= 2 && rows <= 8) continue;
        o_smem[at(row0 + g + (c / 2) * 8, DecodeWarp<V>::Fp8OutColumn(j, c))] = st.o[j][c];
      }
  } else if constexpr (DecodeWarp<V>::kFp8RegsV) {  // permuted columns (see decode_warp.cuh)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (c >= 2 && rows <= 8) continue;
      const int row = row0 + g + (c / 2) * 8, col = DecodeWarp<V>::Fp8OutColumn(0, c);
#pragma unroll
      for (int j = 0; j < kD / 8; j += 4)
        *reinterpret_cast<float4*>(o_smem + at(row, col + j)) =
            make_float4(st.o[j][c], st.o[j + 1][c], st.o[j + 2][c], st.o[j + 3][c]);
    }
  } else {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (h == 1 && rows <= 8) continue;
      const int row = row0 + g + h * 8;
#pragma unroll
      for (int j = 0; j < kD / 8; ++j)
        *reinterpret_cast<float2*>(o_smem + at(row, j * 8 + 2 * t)) =
            make_float2(st.o[j][2 * h], st.o[j][2 * h + 1]);
    }
  }
  float* ml = stats;                                  // (4, 16, 2)
  float* factor = stats + kWarps * kDecodeQTile * 2;  // (4, 16)
  float* row_lse = factor + kWarps * kDecodeQTile;    // (16)
  if (t == 0) {
    ml[(warp * kDecodeQTile + g) * 2 + 0] = st.m[0];
    ml[(warp * kDecodeQTile + g) * 2 + 1] = st.l[0];
    ml[(warp * kDecodeQTile + g + 8) * 2 + 0] = st.m[1];
    ml[(warp * kDecodeQTile + g + 8) * 2 + 1] = st.l[1];
  }
  __syncthreads();
  // Chunks of a cluster plan merge through their cluster (persistent plans never cluster).
  const bool cluster_merge = !kPersistent && p.cluster > 1 && w.partial == kDecodePartialCluster;

  // Per row: the weight of each warp's state, and the row's LSE.
  if (threadIdx.x < kDecodeQTile) {
    const int r = threadIdx.x;
    const float c = p.score_scale;
    float m = NegInf();
    for (int i = 0; i < kWarps; ++i) m = fmaxf(m, ml[(i * kDecodeQTile + r) * 2]);
    float total = 0.f, e[kWarps];
    for (int i = 0; i < kWarps; ++i) {
      e[i] = ScoreWeight(ml[(i * kDecodeQTile + r) * 2], m, c);
      total += e[i] * ml[(i * kDecodeQTile + r) * 2 + 1];
    }
    const float inv = total > 0.f ? 1.f / total : 0.f;
    for (int i = 0; i < kWarps; ++i) factor[i * kDecodeQTile + r] = e[i] * inv;
    row_lse[r] = StateLse(m, total, c);
  }
  __syncthreads();

  for (int idx = threadIdx.x; idx < rows * (kD / 4); idx += kDecodeThreads) {
    const int r = idx / (kD / 4), c4 = (idx % (kD / 4)) * 4;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int i = 0; i < kWarps; ++i) {
      const float f = factor[i * kDecodeQTile + r];
      const float4 x = *reinterpret_cast<const float4*>(o_smem + at(i * kDecodeQTile + r, c4));
      acc.x += f * x.x;
      acc.y += f * x.y;
      acc.z += f * x.z;
      acc.w += f * x.w;
    }
    const int qh = qh0 + r;
    float lse2 = row_lse[r];
    if (cluster_merge) {
      // This chunk's normalised partial, in place of warp 0's O (this thread alone reads
      // (r, c4) of every warp), for ClusterMerge.
      *reinterpret_cast<float4*>(o_smem + at(r, c4)) =
          make_float4(acc.x * p.v_scale, acc.y * p.v_scale, acc.z * p.v_scale, acc.w * p.v_scale);
    } else if (w.partial < 0) {
      float scale = p.v_scale;
      if (p.sinks) scale *= AddSink(lse2, p.sinks[qh]);
      StoreOutput4<T>(p, w.request, qh, c4, acc, scale, lse2);
    } else {
      const int64_t slot = static_cast<int64_t>(w.partial) * p.num_qo_heads + qh;
      *reinterpret_cast<float4*>(p.partial_o + slot * kD + c4) =
          make_float4(acc.x * p.v_scale, acc.y * p.v_scale, acc.z * p.v_scale, acc.w * p.v_scale);
      if (c4 == 0) p.partial_lse[slot] = lse2;
    }
  }
  if (cluster_merge) {
    ClusterMerge<V>(p, w, qh0, rows, o_smem, row_lse);
  } else if (w.partial >= 0 && w.merge >= 0 && p.merge_counters) {
    FusedMerge<V>(p, w, merge_item, head_tile, qh0, rows);
  }
}

}  // namespace flashjit::attention
