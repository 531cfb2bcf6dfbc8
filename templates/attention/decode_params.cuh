// Params of the decode attention kernels: plain data shared by host and device.
//
// One decode CTA computes one work item for one kv head (and one tile of up to 16 of its query
// heads): the attention of a request's query over the key range [kv_start, kv_end) of its cache.
// A request whose keys were split over several work items writes partial results (fp32 output
// and base-2 log-sum-exp) into slots of the workspace; the merge kernel combines them.
#pragma once

#include "common/config.cuh"
#include "common/fast_div.cuh"

namespace flashjit::attention {

// Query heads per CTA: the M dimension of the m16n8k16 tensor-core tile.
constexpr int kDecodeQTile = 16;
// Keys per pipeline stage, and threads per CTA (4 warps of 16 keys each).
constexpr int kDecodeTileKV = 64;
constexpr int kDecodeThreads = 128;
// The merge kernel's warps a CTA (a CTA per request, query head and 32 columns; its warps split
// the partials, 32 each a round trip).
constexpr int kMergeWarps = 4;

struct DecodeWorkItem {
  int32_t request;     // row of q / out / lse
  int32_t page_begin;  // offset of the request's first page id in kv_indices
  int32_t kv_len;      // the request's whole cache length (the query sits at kv_len - 1)
  int32_t kv_start;    // keys [kv_start, kv_end) of this item
  int32_t kv_end;
  // Slot in the partial buffers; -1: write out and lse directly; kDecodePartialCluster: merged
  // by this CTA's thread-block cluster (DecodeParams::cluster).
  int32_t partial;
  int32_t merge;  // the request's merge item when its last CTA merges it, else -1
  int32_t pad_;
};
// Pair stealing (kSteal variants): DecodeWorkItem::pad_ = role | region tiles << 2. Two
// neighbouring chunks of a split request share `region` tiles around their boundary: the front
// item's [kv_start, kv_end) ends region / 2 tiles past the boundary, the back item's starts
// region / 2 tiles before it; each CTA runs its own tiles outside the region first (the front
// ascending from kv_start, the back descending from its last tile), then claims the region's
// tiles kDecodeStealSpan at a time from its own end (DecodeParams::claims), until the two meet.
// Role 0: a plain item.
constexpr int kDecodeStealFront = 1, kDecodeStealBack = 2, kDecodeStealSpan = 2;
static_assert(sizeof(DecodeWorkItem) == 32, "DecodeWorkItem layout is shared with the host");
// DecodeWorkItem::partial of the chunks of a cluster plan. A launch in clusters (cluster > 1)
// merges through its cluster only items marked so: a graph-mode wrapper launches every replay in
// clusters of its one size, and its plans that do not merge by clusters run in them unmerged.
constexpr int32_t kDecodePartialCluster = -2;

struct DecodeMergeItem {
  int32_t request;
  int32_t first_partial;  // slots first_partial .. first_partial + num_partials - 1
  int32_t num_partials;
  int32_t pad_;
};
static_assert(sizeof(DecodeMergeItem) == 16, "DecodeMergeItem layout is shared with the host");

// Persistent plans: a unit is one (work item, head tile); each CTA of the persistent grid walks
// its own list of units. Units 0 .. ctas - 1 are the CTAs' first units (head_tile -1: the CTA has
// none); `next` links to the CTA's next unit (-1: the last).
struct DecodeUnit {
  DecodeWorkItem w;
  int32_t head_tile;
  int32_t next;
  int32_t pad_[2];
};
static_assert(sizeof(DecodeUnit) == 48, "DecodeUnit layout is shared with the host");

struct DecodeParams {
  const void* q;               // [B, Hq, D]
  const void* k;               // cache of keys (see the strides below)
  const void* v;               // cache of values, same strides as k
  const int32_t* kv_indices;   // page ids; null: one contiguous page (single decode)
  void* out;                   // [B, Hq, D], dtype of q
  float* lse;                  // [B, Hq] base 2, or null
  const DecodeWorkItem* work;  // null: uniform split of request 0 (single decode)
  const int32_t* num_work;     // number of valid items (CTAs beyond it exit); null: gridDim.x
  // This CTA's work item and head tile without a division at run time (variants with
  // kFastIndex; set by every launch): with c = cluster (1 when not clustered) and H = the head
  // tiles in x (num_kv_heads * q_tiles when head_major, else 1), grid_item_div divides by c * H
  // and grid_cluster_div by c. Next to work and num_work, so that the CTA's first constant-bank
  // line holds what its first loads need.
  FastDivisor grid_item_div;
  FastDivisor grid_cluster_div;
  int32_t grid_heads;  // H
  int32_t pad0_;
  float* partial_o;    // [slots, Hq, D]
  float* partial_lse;  // [slots, Hq]
  const float* sinks;  // [Hq] natural-log sink logits, or null
  // Fused merge (plans): the last CTA of a split request whose items name a merge item (merge
  // >= 0) merges its partials. Counters [merge items, head tiles] start at 0 and are left at 0.
  // Items with merge -1 leave their partials to the merge kernel.
  const DecodeMergeItem* merge_items;
  int32_t* merge_counters;
  // Persistent plans (16-bit KV, the kernel decode_persistent): *persistent_ctas CTAs walk the
  // unit lists in `units` (CTAs beyond it exit: a captured launch keeps the wrapper's grid).
  // Read on the device, so that a captured launch follows each new plan. `units` holds at least
  // as many entries as the grid has CTAs. Unused by the one-CTA-per-unit kernel.
  const int32_t* persistent_ctas;
  const DecodeUnit* units;
  int64_t q_stride_b, q_stride_h;
  int64_t o_stride_b, o_stride_h;
  int64_t lse_stride_b;
  // Element (page, token in page, kv head, d) of k and v lies at
  //   page * page_stride + token * token_stride + head * head_stride + d.
  int64_t kv_page_stride, kv_token_stride, kv_head_stride;
  FastDivisor page_size;
  // PagedTileLoader's steps between a thread's rows, which lie 4 << i keys apart (i = 0..3 for
  // 4..32 rows a pass): page_row_pages[i] pages and page_row_tokens[i] tokens within a page,
  // 4 << i = pages x page_size + tokens. Host-computed (SetDecodePageSize), so that the kernel
  // reads them from its parameters instead of holding them in registers.
  uint32_t page_row_pages[4], page_row_tokens[4];
  int32_t num_qo_heads, num_kv_heads, group_size, q_tiles;
  int32_t single_kv_len;  // uniform split: the cache length
  int32_t single_chunk;   // uniform split: keys per item
  float sm_scale;         // logits = sm_scale * q.k (k_scale folded in)
  float score_scale;      // factor inside exp2: sm_scale*log2(e), or 1 when logits are transformed
  float soft_cap;         // logits = soft_cap * tanh(logits / soft_cap) when the variant caps
  float v_scale;          // output *= v_scale
  float rope_rcp_scale;   // RoPE: angle = pos * rope_rcp_scale * theta^(-2i/D)
  float rope_log2_theta;
  int32_t window_left;  // keys j >= kv_len - 1 - window_left are visible when windowed
  // CTA order. 1: blockIdx.x = item * (num_kv_heads * q_tiles) + head tile, so that the CTAs
  // of one work item (its kv heads, whose rows share every page) run side by side. 0: blockIdx.x
  // is the item, blockIdx.y the head tile.
  int32_t head_major;
  // Cluster launch (head_major is 1): blockIdx.x = (item / cluster * heads + head tile) *
  // cluster + item % cluster, so that `cluster` consecutive items of one head tile form one
  // thread-block cluster. Plans whose split requests all have `cluster` items (2..16) mark them
  // kDecodePartialCluster, and each cluster merges its chunks through distributed shared memory
  // (no partials in global memory, no counters). 0: off.
  int32_t cluster;
  // Diagnostic variants only (stamps = true): per CTA (blockIdx.x + blockIdx.y * gridDim.x),
  // kDecodeStampWords 64-bit words (see DecodeStamp). Unused by every other variant.
  unsigned long long* stamps;
  // Pair stealing (variants with kSteal; session 12): one 64-bit claim word per (pair of
  // neighbouring chunks of a split request, head tile), at [front partial slot, head tile]: tiles
  // of the pair's shared region claimed by the front CTA (low 32 bits) and the back CTA (high 32).
  // Start at 0 and are left at 0 (the merging CTA clears its request's words). See DecodeSteal.
  unsigned long long* claims;
};
FLASHJIT_CHECK_PARAMS(DecodeParams, 352);

// Sets page_size and the loader's row steps of a cache of pages of `page_size` tokens; a
// contiguous cache (single decode, no kv_indices) is one page of 2^31 tokens.
inline void SetDecodePageSize(DecodeParams& p, uint32_t page_size) {
  p.page_size = MakeFastDivisor(page_size);
  for (int i = 0; i < 4; ++i) {
    p.page_row_pages[i] = (4u << i) / page_size;
    p.page_row_tokens[i] = (4u << i) % page_size;
  }
}

// The words a stamps variant writes per CTA: %globaltimer (ns) at entry, after the prologue's
// copies were issued, when the first tile had landed, and at the end; then the SM clock's
// cycles from entry to the issue (low 32 bits) and to the first tile (high 32), from entry to
// the end, the SM id (low 32) and the CTA's tiles (high 32), and the cycles from entry to the
// plan's record read (low 32) and to past griddepcontrol.wait (high 32).
constexpr int kDecodeStampWords = 8;

#if FLASHJIT_HAS_DEVICE
// CTAs per work item (kv heads x query tiles), and this CTA's work item and head tile.
FLASHJIT_DEVICE int DecodeHeadTiles(const DecodeParams& p) { return p.num_kv_heads * p.q_tiles; }
FLASHJIT_DEVICE int DecodeCtaItem(const DecodeParams& p) {
  if (p.cluster > 1) {
    const int x = static_cast<int>(blockIdx.x);
    return x / (p.cluster * DecodeHeadTiles(p)) * p.cluster + x % p.cluster;
  }
  return p.head_major ? static_cast<int>(blockIdx.x) / DecodeHeadTiles(p)
                      : static_cast<int>(blockIdx.x);
}
FLASHJIT_DEVICE int DecodeCtaHeadTile(const DecodeParams& p) {
  if (p.cluster > 1) return static_cast<int>(blockIdx.x) / p.cluster % DecodeHeadTiles(p);
  return p.head_major ? static_cast<int>(blockIdx.x) % DecodeHeadTiles(p)
                      : static_cast<int>(blockIdx.y);
}
// The same from the launch's divisors (kFastIndex): x = (item / c * H + head tile) * c + item % c,
// so x / c = item / c * H + head tile and x / (c * H) = item / c.
FLASHJIT_DEVICE void DecodeCtaIndexFast(const DecodeParams& p, int& item, int& head_tile) {
  const uint32_t x = blockIdx.x;
  const uint32_t xc = FastDiv(x, p.grid_cluster_div), q = FastDiv(x, p.grid_item_div);
  const uint32_t c = p.grid_cluster_div.divisor;
  item = static_cast<int>(q * c + (x - xc * c));
  head_tile = static_cast<int>(xc - q * static_cast<uint32_t>(p.grid_heads) + blockIdx.y);
}
FLASHJIT_DEVICE int DecodeGridItemsFast(const DecodeParams& p) {
  return static_cast<int>(FastDiv(gridDim.x, p.grid_item_div) * p.grid_cluster_div.divisor);
}
// Work items the grid has room for.
FLASHJIT_DEVICE int DecodeGridItems(const DecodeParams& p) {
  return p.head_major ? static_cast<int>(gridDim.x) / DecodeHeadTiles(p)
                      : static_cast<int>(gridDim.x);
}
#endif

struct DecodeMergeParams {
  const float* partial_o;        // [slots, Hq, D]
  const float* partial_lse;      // [slots, Hq]
  const DecodeMergeItem* items;  // null: one item, slots 0 .. single_partials - 1 of request 0
  const int32_t* num_items;      // null: gridDim.x
  void* out;
  float* lse;
  const float* sinks;
  int64_t o_stride_b, o_stride_h, lse_stride_b;
  int32_t num_qo_heads;
  int32_t single_partials;
};
FLASHJIT_CHECK_PARAMS(DecodeMergeParams, 88);

}  // namespace flashjit::attention

namespace flashjit::attention {

// Dynamic shared memory of the decode kernel (host and device agree through this function):
//   [pipeline: stages x (K tile, V tile)  |  or, after the loop, 4 warps x 16 x (D + 8) fp32]
//   [Q: 16 x D 16-bit, later the per-warp softmax statistics]
//   [fp8 KV with RoPE at D 256 only: per-warp rotated 16-bit copies of 16 keys]
//   [16-bit KV only: the persistent epilogue's statistics (DecodeStatsBytes)]
//   [RoPE only: the D/2 frequencies, four floats each (DecodeRopeFreq), then, where the keys
//    turn in registers (DecodeRopeInRegs), four more each (DecodeRopeStep): DecodeRopeTableBytes]
// A persistent CTA (16-bit KV) runs its epilogue in the pipeline stage of the unit's last tile,
// rows of D floats whose 32-byte segments are XOR-swizzled by the row (no padding: 4 x 16 x D x 4
// bytes = one stage of 16-bit K and V tiles).
FLASHJIT_HD constexpr int DecodePipelineBytes(int head_dim, int kv_bytes, int stages) {
  return stages * 2 * kDecodeTileKV * head_dim * kv_bytes;
}
FLASHJIT_HD constexpr int DecodeEpilogueBytes(int head_dim) {
  return (kDecodeThreads / 32) * kDecodeQTile * (head_dim + 8) * 4;
}
// The epilogue's softmax statistics of a persistent CTA: (4 warps, 16, 2) + (4, 16) + 16 floats,
// kept apart from Q (the next unit's query is staged during the epilogue).
FLASHJIT_HD constexpr int DecodeStatsBytes() { return 1024; }
// fp8 keys with RoPE turn in registers, on their way from the fp8 tile into the B fragments, up
// to D 128; at D 256 (255 registers without RoPE) they turn as 16-bit rows in shared memory.
FLASHJIT_HD constexpr bool DecodeRopeInRegs(int head_dim, int kv_bytes) {
  return kv_bytes == 1 && head_dim <= 128;
}
FLASHJIT_HD constexpr int DecodeRopeTableBytes(int head_dim, int kv_bytes) {
  return head_dim / 2 * (DecodeRopeInRegs(head_dim, kv_bytes) ? 32 : 16);
}
FLASHJIT_HD constexpr int DecodeSmemBytes(int head_dim, int kv_bytes, int stages, bool rope) {
  const int a = DecodePipelineBytes(head_dim, kv_bytes, stages);
  const int b = DecodeEpilogueBytes(head_dim);
  const int convert = kv_bytes == 1 && rope && !DecodeRopeInRegs(head_dim, kv_bytes)
                          ? (kDecodeThreads / 32) * 16 * head_dim * 2
                          : 0;
  // 16-bit KV: persistent plans keep their statistics after Q (see DecodeStatsBytes).
  const int stats = kv_bytes == 2 ? DecodeStatsBytes() : 0;
  const int table = rope ? DecodeRopeTableBytes(head_dim, kv_bytes) : 0;
  return (a > b ? a : b) + kDecodeQTile * head_dim * 2 + convert + stats + table;
}

}  // namespace flashjit::attention
