// Decode attention over a paged (or contiguous) KV cache: one CTA per (work item, kv head,
// tile of 16 query heads), 4 warps, a cp.async pipeline of kStages tiles of 64 keys.
//
// Variant: DTypeQ (q, out and the tensor-core type), DTypeKV (16-bit = DTypeQ, or fp8),
// kHeadDim, kStages, kSoftCap, kAlibi, kRope; kFastIndex (the CTA's item and head tile from the
// launch's divisors, DecodeCtaIndexFast, and the loader's parameters read before the item);
// kStamps (diagnostic timestamps); kSteal (pair stealing: DecodeWorkItem::pad_, session 12);
// kPageSize (0: the page size read at run time, PagedTileLoader; else that page size, compiled
// in: FixedPageTileLoader, session 30).
#pragma once

#include "attention/decode_epilogue.cuh"
#include "attention/decode_warp.cuh"
#include "attention/kv_prep.cuh"
#include "attention/paged_kv_fixed.cuh"
#include "common/pdl.cuh"

namespace flashjit::attention {

// Programmatic dependent launch (common/pdl.cuh; see DecodePdl for when a launch takes it). A
// decode CTA reads only the plan's records (work item, merge item, units: written by Plan's copy,
// which the stream orders) before GridDependencyWait; the page table, K/V, q, the counters and
// every output come after it.

// Diagnostic stamps (variants with kStamps; DecodeParams::stamps, kDecodeStampWords per CTA):
// thread 0 keeps them in registers and writes them at the CTA's end. Marks 0..3 (globaltimer and
// clock64): entry, the prologue's copies issued, the first tile landed, the end; marks 4 and 5
// (clock64 only): the plan's record read (work item and count, or the unit), past
// griddepcontrol.wait.
struct DecodeStampRegs {
  unsigned long long t[4];
  long long c[6];
  FLASHJIT_DEVICE void Mark(int i) {
    if (i < 4) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t[i])::"memory");
    c[i] = clock64();
  }
  // Mark(i) once `v` is known (the loads it depends on have landed).
  FLASHJIT_DEVICE void MarkAfter(int i, int v) {
    asm volatile("" ::"r"(v));
    Mark(i);
  }
  FLASHJIT_DEVICE void Write(const DecodeParams& p, int tiles) const {
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    const int cta = static_cast<int>(blockIdx.x + blockIdx.y * gridDim.x);
    unsigned long long* out = p.stamps + static_cast<int64_t>(cta) * kDecodeStampWords;
    auto pair = [&](int a, int b) {
      return static_cast<unsigned long long>(static_cast<uint32_t>(c[a] - c[0])) |
             (static_cast<unsigned long long>(static_cast<uint32_t>(c[b] - c[0])) << 32);
    };
    out[0] = t[0];
    out[1] = t[1];
    out[2] = t[2];
    out[3] = t[3];
    out[4] = pair(1, 2);
    out[5] = static_cast<unsigned long long>(c[3] - c[0]);
    out[6] = sm | (static_cast<unsigned long long>(static_cast<uint32_t>(tiles)) << 32);
    out[7] = pair(4, 5);
  }
};

// The work item of this CTA: from the plan, or the uniform split of a single request.
template <bool kFastIndex = false>
FLASHJIT_DEVICE DecodeWorkItem ThisWorkItem(const DecodeParams& p, int item) {
  if (p.work) return p.work[item];
  DecodeWorkItem w;
  w.request = 0;
  w.page_begin = 0;
  w.kv_len = p.single_kv_len;
  w.kv_start = item * p.single_chunk;
  w.kv_end = min(p.single_kv_len, w.kv_start + p.single_chunk);
  if (p.cluster > 1)
    w.partial = kDecodePartialCluster;
  else if constexpr (kFastIndex)
    w.partial = DecodeGridItemsFast(p) > 1 ? item : -1;
  else
    w.partial = DecodeGridItems(p) > 1 ? item : -1;
  w.merge = -1;
  w.pad_ = 0;
  return w;
}

// RoPE variants: the table of the D/2 frequencies (DecodeRopeFreq, then DecodeRopeStep where
// the keys turn in registers) at the end of the dynamic shared memory (DecodeSmemBytes),
// written once per CTA from the parameters alone (so before GridDependencyWait), read after a
// barrier by the query's and the keys' rotations.
template <class V>
FLASHJIT_DEVICE DecodeRopeFreq* RopeTable(char* smem) {
  constexpr int kD = V::kHeadDim, kKvBytes = sizeof(typename V::DTypeKV);
  return reinterpret_cast<DecodeRopeFreq*>(smem + DecodeSmemBytes(kD, kKvBytes, V::kStages, true) -
                                           DecodeRopeTableBytes(kD, kKvBytes));
}
template <class V>
FLASHJIT_DEVICE void FillRopeTable(const DecodeParams& p, DecodeRopeFreq* table) {
  constexpr int kD = V::kHeadDim;
  for (int i = threadIdx.x; i < kD / 2; i += kDecodeThreads) {
    const double t = DecodeRopeTurns(i, kD, p.rope_rcp_scale, p.rope_log2_theta);
    double c, s;
    table[i] = DecodeRopeFreqOf(t, c, s);
    if constexpr (DecodeRopeInRegs(kD, sizeof(typename V::DTypeKV)))
      reinterpret_cast<DecodeRopeStep*>(table + kD / 2)[i] = DecodeRopeStepOf<kDecodeTileKV>(c, s);
  }
}

// A CTA's query tile (16 rows of D, zero past the group) in this thread's registers: Load
// issues the loads, Store writes the tile into swizzled shared memory (RoPE at qpos when the
// variant has it). A CTA loads its first query before the page ids of its first tiles, so that
// the query's loads do not queue in the memory system behind the prologue's K/V copies (session
// 28); a persistent CTA loads its next unit's query during the current unit's last tile.
template <class V>
struct QueryRegs {
  using T = typename V::DTypeQ;
  static constexpr int kHalf = V::kHeadDim / 16;  // 16-byte chunks of half a row
  static constexpr int kIters = (kDecodeQTile * kHalf + kDecodeThreads - 1) / kDecodeThreads;
  Vec<T, 8> a[kIters], b[kIters];

  FLASHJIT_DEVICE void Load(const DecodeParams& p, int request, int qh0, int rows) {
    const T* q = static_cast<const T*>(p.q) + request * p.q_stride_b;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int idx = threadIdx.x + i * kDecodeThreads, row = idx / kHalf, c = idx % kHalf;
      a[i] = b[i] = Vec<T, 8>{};
      if (idx < kDecodeQTile * kHalf && row < rows) {
        const T* src = q + (qh0 + row) * p.q_stride_h;
        a[i] = LoadVec<T, 8>(src + c * 8);
        b[i] = LoadVec<T, 8>(src + (c + kHalf) * 8);
      }
    }
  }

  // Writes the tile into q_smem (`table`: RopeTable, written and synchronized, when kRope).
  FLASHJIT_DEVICE void Store(int qpos, const DecodeRopeFreq* table, T* q_smem) {
    constexpr int kD = V::kHeadDim, kChunks = kD / 8;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int idx = threadIdx.x + i * kDecodeThreads, row = idx / kHalf, c = idx % kHalf;
      if (idx >= kDecodeQTile * kHalf) continue;
      if constexpr (V::kRope) RopeChunkPair(qpos, table, c, a[i], b[i]);
      *reinterpret_cast<Vec<T, 8>*>(q_smem + SwizzledChunk<kChunks>(row, c) * 8) = a[i];
      *reinterpret_cast<Vec<T, 8>*>(q_smem + SwizzledChunk<kChunks>(row, c + kHalf) * 8) = b[i];
    }
  }
};

// A unit of a persistent plan (three 16-byte loads; the host wrote it before the launch).
FLASHJIT_DEVICE DecodeUnit LoadUnit(const DecodeUnit* u) {
  const int4* src = reinterpret_cast<const int4*>(u);
  const int4 x = __ldg(src), y = __ldg(src + 1), z = __ldg(src + 2);
  DecodeUnit r;
  r.w.request = x.x;
  r.w.page_begin = x.y;
  r.w.kv_len = x.z;
  r.w.kv_start = x.w;
  r.w.kv_end = y.x;
  r.w.partial = y.y;
  r.w.merge = y.z;
  r.w.pad_ = y.w;
  r.head_tile = z.x;
  r.next = z.y;
  r.pad_[0] = z.z;
  r.pad_[1] = z.w;
  return r;
}

// What the compute side of a persistent CTA derives from its unit.
struct DecodeUnitView {
  int kv_head, qh0, rows, qpos, key_lo, n_tiles;

  FLASHJIT_DEVICE void Set(const DecodeParams& p, const DecodeUnit& u) {
    kv_head = u.head_tile / p.q_tiles;
    qh0 = kv_head * p.group_size + (u.head_tile % p.q_tiles) * kDecodeQTile;
    rows = min(kDecodeQTile, p.group_size - (u.head_tile % p.q_tiles) * kDecodeQTile);
    qpos = u.w.kv_len - 1;
    key_lo = p.window_left >= 0 ? max(u.w.kv_start, qpos - p.window_left) : u.w.kv_start;
    n_tiles = Tiles(u.w);
  }
  // Tiles of a unit; an empty unit takes one (zero-filled, fully masked) so that it still
  // passes through the pipeline and its epilogue writes out = 0, lse = -inf.
  static FLASHJIT_DEVICE int Tiles(const DecodeWorkItem& w) {
    return max(1, (w.kv_end - w.kv_start + kDecodeTileKV - 1) / kDecodeTileKV);
  }
};

// Persistent CTA (16-bit KV): walks its list of units (first: units[cta]) with one cp.async
// pipeline over the concatenation of their tiles. The issue side runs kStages - 1 tiles ahead of
// the compute side and crosses unit boundaries on its own (work item and page ids of the next
// unit read ahead), so the loads of unit i + 1's first tiles are in flight while unit i's last
// tile is computed and its epilogue runs; the epilogue uses the stage of unit i's last tile (the
// only one not in flight then), swizzled to fit it. The next unit's query is read into registers
// during the last tile.
template <class V>
FLASHJIT_DEVICE void DecodePersistent(const DecodeParams& p, const DecodeUnit& first,
                                      DecodeStampRegs& stamp) {
  using T = typename V::DTypeQ;
  using TKV = typename V::DTypeKV;
  constexpr int kD = V::kHeadDim, kStages = V::kStages, kTile = kDecodeTileKV;
  static_assert(sizeof(TKV) == 2, "persistent plans are for 16-bit KV caches");
  static_assert(
      DecodeEpilogueBytes(kD) - kDecodeThreads / 32 * kDecodeQTile * 8 * 4 == 2 * kTile * kD * 2,
      "the swizzled epilogue fills exactly one stage");
  using Loader = DecodeTileLoader<V, kTile, kDecodeThreads>;
  extern __shared__ __align__(128) char smem[];
  constexpr int kRegionA = DecodePipelineBytes(kD, sizeof(TKV), kStages) > DecodeEpilogueBytes(kD)
                               ? DecodePipelineBytes(kD, sizeof(TKV), kStages)
                               : DecodeEpilogueBytes(kD);
  T* q_smem = reinterpret_cast<T*>(smem + kRegionA);
  float* stats = reinterpret_cast<float*>(smem + kRegionA + kDecodeQTile * kD * 2);
  auto k_stage = [&](int s) { return smem + s * 2 * Loader::kTileBytes; };
  auto v_stage = [&](int s) { return smem + (s * 2 + 1) * Loader::kTileBytes; };
  DecodeRopeFreq* rope_table = V::kRope ? RopeTable<V>(smem) : nullptr;
  if constexpr (V::kRope) FillRopeTable<V>(p, rope_table);

  // The compute side's first unit, whose query's loads go out before the issue side's page ids.
  DecodeUnit cu = first, cnext;
  DecodeUnitView v;
  v.Set(p, cu);
  QueryRegs<V> next_q;  // the first unit's query, later the next unit's
  next_q.Load(p, cu.w.request, v.qh0, v.rows);

  // Issue side: the unit whose tiles are being issued, the next tile of it, and the unit after
  // it (read when the cursor entered `iu`).
  DecodeUnit iu = first, inext;
  int i_tile = 0, i_tiles = DecodeUnitView::Tiles(iu.w);
  bool i_more = true;  // tiles left to issue
  if (iu.next >= 0) inext = LoadUnit(p.units + iu.next);
  Loader loader;
  loader.Init(p, iu.w, iu.head_tile / p.q_tiles);
  // Moves the cursor past the tile just issued (to the next unit after the last tile).
  auto advance = [&] {
    if (++i_tile < i_tiles) return;
    if (iu.next < 0) {
      i_more = false;
      return;
    }
    iu = inext;
    i_tile = 0;
    i_tiles = DecodeUnitView::Tiles(iu.w);
    loader.Init(p, iu.w, iu.head_tile / p.q_tiles);
    if (iu.next >= 0) inext = LoadUnit(p.units + iu.next);
  };
  // Issues the tile at the cursor (page ids prefetched) into stage s, then reads the page ids
  // of the tile after it. Commits a group in any case.
  auto issue = [&](int s) {
    if (i_more) {
      loader.IssueTile(iu.w.kv_start + i_tile * kTile, k_stage(s), v_stage(s));
      advance();
      if (i_more) loader.PrefetchPages(iu.w.kv_start + i_tile * kTile);
    }
    CpAsyncCommit();
  };

  // Prologue: as the one-unit kernel when the first unit has kStages - 1 tiles (their page ids
  // in flight together), else tile by tile through the cursor.
  if (i_tiles >= kStages - 1) {
    typename Loader::TileRows pages[kStages - 1];
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) loader.LoadPages(iu.w.kv_start + s * kTile, pages[s]);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      loader.IssueTile(iu.w.kv_start + s * kTile, pages[s], k_stage(s), v_stage(s));
      CpAsyncCommit();
      advance();
    }
    if (i_more) loader.PrefetchPages(iu.w.kv_start + i_tile * kTile);
  } else {
    loader.PrefetchPages(iu.w.kv_start);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) issue(s);
  }
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0) stamp.Mark(1);
  }

  // Compute side: the unit whose tiles are computed, and the one after it.
  if (cu.next >= 0) cnext = LoadUnit(p.units + cu.next);
  DecodeMergeItem merge_item = {};
  if (cu.w.merge >= 0 && p.merge_counters) merge_item = p.merge_items[cu.w.merge];
  if constexpr (V::kRope) __syncthreads();  // the RoPE table
  next_q.Store(v.qpos, rope_table, q_smem);
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  DecodeWarp<V> state;
  auto start_unit = [&] {
    state.Init(q_smem);
    if constexpr (V::kAlibi) {
      const int r0 = lane / 4, r1 = lane / 4 + 8;
      state.slope[0] = r0 < v.rows ? AlibiSlope(v.qh0 + r0, p.num_qo_heads) : 0.f;
      state.slope[1] = r1 < v.rows ? AlibiSlope(v.qh0 + r1, p.num_qo_heads) : 0.f;
    } else {
      state.slope[0] = state.slope[1] = 0.f;
    }
  };
  start_unit();

  DecodeUnitView nv;
  int c_tile = 0;
  int g = 0;
  for (;; ++g) {  // g: tile of the CTA's sequence, in stage g % kStages
    CpAsyncWait<kStages - 2>();
    __syncthreads();
    if constexpr (V::kStamps) {
      if (g == 0 && threadIdx.x == 0) stamp.Mark(2);
    }
    issue((g + kStages - 1) % kStages);
    const bool last = c_tile + 1 == v.n_tiles;
    if (last && cu.next >= 0) {  // the next unit's query, in flight during this tile
      nv.Set(p, cnext);
      next_q.Load(p, cnext.w.request, nv.qh0, nv.rows);
    }

    const int key0 = cu.w.kv_start + c_tile * kTile + warp * 16;
    if (key0 < cu.w.kv_end && key0 + 16 > v.key_lo) {
      const char* k_src = k_stage(g % kStages) + warp * 16 * kD * sizeof(TKV);
      const char* v_src = v_stage(g % kStages) + warp * 16 * kD * sizeof(TKV);
      if constexpr (V::kRope) {
        __syncwarp();
        RopeRows<T, kD>(const_cast<T*>(reinterpret_cast<const T*>(k_src)), key0, rope_table);
        __syncwarp();
      }
      state.Step(p, k_src, v_src, key0, v.key_lo, cu.w.kv_end, v.qpos);
    }
    if (!last) {
      ++c_tile;
      continue;
    }

    // The unit's end. Its Q is in the warps' registers, so the next unit's query can replace
    // it in shared memory now; the epilogue's barriers order that before start_unit's reads.
    if (cu.next >= 0) {
      // Q's fragments read from q_smem at each step: every warp's last step first.
      if constexpr (DecodeWarp<V>::kQSmem) __syncthreads();
      next_q.Store(nv.qpos, rope_table, q_smem);
    }
    __syncthreads();  // every warp is done with stage g % kStages: the epilogue takes it
    state.FinishRows();
    DecodeEpilogue<V, true>(p, cu.w, merge_item, state, cu.head_tile, v.qh0, v.rows,
                            reinterpret_cast<float*>(k_stage(g % kStages)), stats);
    if (cu.next < 0) break;
    cu = cnext;
    if (cu.next >= 0) cnext = LoadUnit(p.units + cu.next);
    v = nv;
    merge_item = {};
    if (cu.w.merge >= 0 && p.merge_counters) merge_item = p.merge_items[cu.w.merge];
    c_tile = 0;
    __syncthreads();  // q_smem written by every thread (FusedMerge may have returned early)
    start_unit();
  }
  CpAsyncWait<0>();
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0) {
      stamp.Mark(3);
      stamp.Write(p, g + 1);
    }
  }
}

template <class V>
__device__ void decode_attention(const DecodeParams& p) {
  using T = typename V::DTypeQ;
  using TKV = typename V::DTypeKV;
  constexpr int kD = V::kHeadDim, kStages = V::kStages, kTile = kDecodeTileKV;
  // fp8 with RoPE at D 256: each warp converts its keys into rotated 16-bit rows in shared
  // memory; values, and the keys of other fp8 variants, convert (and turn) in registers
  // (DecodeWarp::kFp8RegsV, kFp8RegsK).
  constexpr bool kConvert = sizeof(TKV) == 1 && V::kRope && !DecodeRopeInRegs(kD, sizeof(TKV));
  static_assert(kStages >= 2, "the pipeline needs at least two stages");
  using Loader = DecodeTileLoader<V, kTile, kDecodeThreads>;

  DecodeStampRegs stamp;
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0) stamp.Mark(0);
  }
  GridLaunchDependents();
  // kFastIndex: a branch on a parameter right after the trigger keeps ptxas from scheduling the
  // index arithmetic (which waits for the constant-bank reads) ahead of it; else the dependent
  // launch's trigger waits for those reads (b2b +0.45 us at B=16 L=1k, session 11 call 2).
  if constexpr (V::kFastIndex) {
    if (p.grid_heads <= 0) return;
  }
  // The item is read before the count (the grid never exceeds the workspace's capacity), so
  // that the two loads overlap.
  int item, head_tile, kv_head, q_tile;
  Loader loader;
  if constexpr (V::kFastIndex) {
    DecodeCtaIndexFast(p, item, head_tile);
    kv_head = p.q_tiles == 1 ? head_tile : head_tile / p.q_tiles;
    q_tile = head_tile - kv_head * p.q_tiles;
    loader.InitHead(p, kv_head);  // parameters only: their constant-bank reads start now
  } else {
    item = DecodeCtaItem(p);
    head_tile = DecodeCtaHeadTile(p);
    kv_head = head_tile / p.q_tiles;
    q_tile = head_tile % p.q_tiles;
  }
  const DecodeWorkItem w = ThisWorkItem<V::kFastIndex>(p, item);
  int num_items;
  if constexpr (V::kFastIndex)
    num_items = p.num_work ? *p.num_work : DecodeGridItemsFast(p);
  else
    num_items = p.num_work ? *p.num_work : DecodeGridItems(p);
  if (item >= num_items) return;  // graph mode: fixed grid
  const int qh0 = kv_head * p.group_size + q_tile * kDecodeQTile;
  const int rows = min(kDecodeQTile, p.group_size - q_tile * kDecodeQTile);
  const int qpos = w.kv_len - 1;
  const int key_lo = p.window_left >= 0 ? max(w.kv_start, qpos - p.window_left) : w.kv_start;
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0) stamp.MarkAfter(4, key_lo + w.kv_end + w.page_begin + num_items);
  }

  extern __shared__ __align__(128) char smem[];
  constexpr int kRegionA = DecodePipelineBytes(kD, sizeof(TKV), kStages) > DecodeEpilogueBytes(kD)
                               ? DecodePipelineBytes(kD, sizeof(TKV), kStages)
                               : DecodeEpilogueBytes(kD);
  T* q_smem = reinterpret_cast<T*>(smem + kRegionA);
  T* convert = q_smem + kDecodeQTile * kD;  // kConvert only: (4 warps, 16 keys, D)
  auto k_stage = [&](int s) { return smem + s * 2 * Loader::kTileBytes; };
  auto v_stage = [&](int s) { return smem + (s * 2 + 1) * Loader::kTileBytes; };
  DecodeRopeFreq* rope_table = V::kRope ? RopeTable<V>(smem) : nullptr;
  if constexpr (V::kRope) FillRopeTable<V>(p, rope_table);

  // A split request's merge item, read now so that the tail does not wait for it.
  DecodeMergeItem merge_item = {};
  if (w.merge >= 0 && p.merge_counters) merge_item = p.merge_items[w.merge];
  GridDependencyWait();  // PDL: nothing below may run before the previous kernel's end
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0) stamp.Mark(5);
  }
  QueryRegs<V> query;
  query.Load(p, w.request, qh0, rows);

  // Prologue: the page ids of the first kStages - 1 tiles (all loads in flight together), their
  // copies, the page ids of the next tile, then the query (loaded above) into shared memory.
  if constexpr (V::kFastIndex)
    loader.InitItem(p, w);
  else
    loader.Init(p, w, kv_head);
  // Pair stealing (kSteal, role != 0): the CTA's own tiles are the n_tiles outside the shared
  // region; `open` while claims may add more (each claim's answer is read one tile later, and a
  // claim goes out while more than kStages tiles are known, so the issue side never runs past
  // what is known). The back CTA runs its tiles from the last one down.
  const int n_max = (w.kv_end - w.kv_start + kTile - 1) / kTile;
  const int role = V::kSteal ? (w.pad_ & 3) : 0;
  int n_tiles = role ? n_max - (w.pad_ >> 2) : n_max;
  bool open = role != 0, pending = false;
  unsigned long long claim_old = 0;  // thread 0: the claim word before its last claim
  unsigned long long* claim_word = nullptr;
  __shared__ int claim_box[2];
  if constexpr (V::kSteal) {
    if (role)
      claim_word = p.claims +
                   static_cast<int64_t>(role == kDecodeStealFront ? w.partial : w.partial - 1) *
                       DecodeHeadTiles(p) +
                   head_tile;
  }
  const int top = w.kv_start + (n_max - 1) * kTile;
  auto tile_pos = [&](int t) {
    return V::kSteal && role == kDecodeStealBack ? top - t * kTile : w.kv_start + t * kTile;
  };
  {
    typename Loader::TileRows pages[kStages - 1];
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s)
      if (s < n_tiles) loader.LoadPages(tile_pos(s), pages[s]);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < n_tiles) loader.IssueTile(tile_pos(s), pages[s], k_stage(s), v_stage(s));
      CpAsyncCommit();
    }
  }
  if (kStages - 1 < n_tiles) loader.PrefetchPages(tile_pos(kStages - 1));
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0) stamp.Mark(1);
  }
  if constexpr (V::kRope) __syncthreads();  // the RoPE table
  query.Store(qpos, rope_table, q_smem);
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  DecodeWarp<V> state;
  state.Init(q_smem, rope_table);
  if constexpr (V::kAlibi) {
    const int r0 = lane / 4, r1 = lane / 4 + 8;
    state.slope[0] = r0 < rows ? AlibiSlope(qh0 + r0, p.num_qo_heads) : 0.f;
    state.slope[1] = r1 < rows ? AlibiSlope(qh0 + r1, p.num_qo_heads) : 0.f;
  } else {
    state.slope[0] = state.slope[1] = 0.f;
  }

  // Main loop: wait for tile t, refill the stage freed by tile t - 1, compute tile t.
  for (int t = 0; t < n_tiles; ++t) {
    if constexpr (V::kSteal) {
      if (pending && threadIdx.x == 0) {  // the region's tiles the last claim got
        const int lo = static_cast<int>(claim_old & 0xffffffffu);
        const int hi = static_cast<int>(claim_old >> 32);
        claim_box[t & 1] = min(kDecodeStealSpan, max(0, (w.pad_ >> 2) - lo - hi));
      }
    }
    CpAsyncWait<kStages - 2>();
    __syncthreads();
    if constexpr (V::kStamps) {
      if (t == 0 && threadIdx.x == 0) stamp.Mark(2);
    }
    if constexpr (V::kSteal) {
      if (pending) {
        const int got = claim_box[t & 1];
        n_tiles += got;
        open = got == kDecodeStealSpan;
        pending = false;
      }
      if (open && n_tiles - t <= kStages + kDecodeStealSpan) {
        if (threadIdx.x == 0)
          claim_old =
              atomicAdd(claim_word, role == kDecodeStealFront
                                        ? static_cast<unsigned long long>(kDecodeStealSpan)
                                        : static_cast<unsigned long long>(kDecodeStealSpan) << 32);
        pending = true;
      }
    }
    const int next = t + kStages - 1;
    if (next < n_tiles) {
      loader.IssueTile(tile_pos(next), k_stage(next % kStages), v_stage(next % kStages));
      if (next + 1 < n_tiles) loader.PrefetchPages(tile_pos(next + 1));
    }
    CpAsyncCommit();

    const int key0 = tile_pos(t) + warp * 16;
    if (key0 >= w.kv_end || key0 + 16 <= key_lo) continue;  // nothing of this warp's 16 keys
    const char* k_src = k_stage(t % kStages) + warp * 16 * kD * sizeof(TKV);
    const char* v_src = v_stage(t % kStages) + warp * 16 * kD * sizeof(TKV);
    const void* k_rows;
    const void* v_rows;
    if constexpr (kConvert) {  // keys converted and rotated in one pass; values stay fp8
      T* k_conv = convert + warp * 16 * kD;
      ConvertRopeRows<T, TKV, kD>(k_src, k_conv, key0, rope_table);
      k_rows = k_conv;
      v_rows = v_src;
    } else {
      k_rows = k_src;
      v_rows = v_src;
      if constexpr (V::kRope && sizeof(TKV) == 2) {
        __syncwarp();
        RopeRows<T, kD>(const_cast<T*>(static_cast<const T*>(k_rows)), key0, rope_table);
      }
    }
    if constexpr (V::kRope && !DecodeWarp<V>::kRopeRegs) __syncwarp();
    state.Step(p, k_rows, v_rows, key0, key_lo, w.kv_end, qpos);
  }
  CpAsyncWait<0>();
  __syncthreads();
  state.FinishRows();
  DecodeEpilogue<V>(p, w, merge_item, state, head_tile, qh0, rows, reinterpret_cast<float*>(smem),
                    reinterpret_cast<float*>(q_smem));
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0) {
      if (n_tiles == 0) stamp.Mark(2);  // no tile: 'landed' = the end
      stamp.Mark(3);
      stamp.Write(p, n_tiles);
    }
  }
}

// The persistent grid's entry (16-bit KV): CTA blockIdx.x walks the units linked from
// units[blockIdx.x]; CTAs at or beyond *p.persistent_ctas (a captured launch's fixed grid) exit.
// A kernel of its own, so that the one-CTA-per-unit kernel keeps its registers.
template <class V>
__device__ void decode_persistent(const DecodeParams& p) {
  if constexpr (sizeof(typename V::DTypeKV) == 2) {
    DecodeStampRegs stamp;
    if constexpr (V::kStamps) {
      if (threadIdx.x == 0) stamp.Mark(0);
    }
    GridLaunchDependents();
    const int cta = static_cast<int>(blockIdx.x);
    const int ctas = *p.persistent_ctas;
    const DecodeUnit first = LoadUnit(p.units + cta);  // the grid never exceeds the capacity
    if (cta >= ctas || first.head_tile < 0) return;
    if constexpr (V::kStamps) {
      if (threadIdx.x == 0) stamp.MarkAfter(4, first.w.kv_start + first.w.page_begin + ctas);
    }
    GridDependencyWait();  // PDL: the plan's units above, everything else below
    if constexpr (V::kStamps) {
      if (threadIdx.x == 0) stamp.Mark(5);
    }
    DecodePersistent<V>(p, first, stamp);
  } else {
    __trap();  // plans of fp8 caches are never persistent
  }
}

}  // namespace flashjit::attention
