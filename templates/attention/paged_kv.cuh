// Paged KV addressing and the cp.async loader of K/V tiles into shared memory.
//
// A tile is kTile consecutive keys of one request and one kv head, D elements each, stored in
// shared memory as rows of 16-byte chunks with an XOR swizzle (chunk ^ row % 8) so that
// ldmatrix reads of 8 rows hit 8 different bank groups. Keys past the end of the item are
// zero-filled (masked scores must meet finite values in P.V).
#pragma once

#include "attention/bulk_copy_sm90.cuh"
#include "attention/cp_async_sm80.cuh"
#include "attention/decode_params.cuh"

namespace flashjit::attention {

// Index of 16-byte chunk `chunk` of row `row` in a swizzled tile with kChunks chunks per row.
template <int kChunks>
FLASHJIT_DEVICE int SwizzledChunk(int row, int chunk) {
  constexpr int kMask = (kChunks < 8 ? kChunks : 8) - 1;
  return row * kChunks + (chunk ^ (row & kMask));
}

// Loads tiles of K and V for one (work item, kv head). Each thread copies a fixed chunk column
// of kRows rows; the page ids of the next tile are read one tile ahead so that the page table
// lookup is off the critical path.
template <class TKV, int kHeadDim, int kTile, int kThreads>
struct PagedTileLoader {
  static constexpr int kChunks = kHeadDim * static_cast<int>(sizeof(TKV)) / 16;  // per row
  static constexpr int kElemsPerChunk = 16 / static_cast<int>(sizeof(TKV));
  static constexpr int kRowsPerPass = kThreads / kChunks;
  static constexpr int kRows = kTile / kRowsPerPass;  // rows per thread
  static_assert(kThreads % kChunks == 0 && kTile % kRowsPerPass == 0, "tile does not divide");
  static constexpr int kTileBytes = kTile * kHeadDim * static_cast<int>(sizeof(TKV));

  const char* k_base;  // k + kv_head * head_stride + chunk column, in bytes
  const char* v_base;
  const int32_t* page_ids;  // kv_indices + page_begin, or null (contiguous)
  int64_t page_stride_bytes, token_stride_bytes;
  FastDivisor page_size;
  int kv_end;
  int chunk, row0;
  int32_t next_page[kRows];  // page id of each row of the tile fetched next

  FLASHJIT_DEVICE void Init(const DecodeParams& p, const DecodeWorkItem& w, int kv_head) {
    chunk = threadIdx.x % kChunks;
    row0 = threadIdx.x / kChunks;
    const int64_t head_bytes = kv_head * p.kv_head_stride * static_cast<int64_t>(sizeof(TKV));
    k_base = static_cast<const char*>(p.k) + head_bytes + chunk * 16;
    v_base = static_cast<const char*>(p.v) + head_bytes + chunk * 16;
    page_ids = p.kv_indices ? p.kv_indices + w.page_begin : nullptr;
    page_stride_bytes = p.kv_page_stride * static_cast<int64_t>(sizeof(TKV));
    token_stride_bytes = p.kv_token_stride * static_cast<int64_t>(sizeof(TKV));
    page_size = p.page_size;
    kv_end = w.kv_end;
  }

  // Reads the page ids of this thread's rows of the tile that starts at key `tile_start`.
  FLASHJIT_DEVICE void LoadPages(int tile_start, int32_t (&pages)[kRows]) const {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int tok = tile_start + row0 + i * kRowsPerPass;
      pages[i] = 0;
      if (page_ids && tok < kv_end) pages[i] = __ldg(page_ids + FastDiv(tok, page_size));
    }
  }

  // Reads the page ids of the tile that starts at key `tile_start` (issue before IssueTile).
  FLASHJIT_DEVICE void PrefetchPages(int tile_start) { LoadPages(tile_start, next_page); }

  // Starts the copy of the tile at `tile_start` (whose pages were prefetched) into k_tile and
  // v_tile (shared, kTileBytes each). Commits nothing.
  FLASHJIT_DEVICE void IssueTile(int tile_start, char* k_tile, char* v_tile) const {
    IssueTile(tile_start, next_page, k_tile, v_tile);
  }

  // As above, with the tile's page ids given (from LoadPages).
  FLASHJIT_DEVICE void IssueTile(int tile_start, const int32_t (&pages)[kRows], char* k_tile,
                                 char* v_tile) const {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int row = row0 + i * kRowsPerPass;
      const int tok = tile_start + row;
      const bool valid = tok < kv_end;
      const int in_page = page_ids ? tok - static_cast<int>(FastDiv(tok, page_size)) *
                                               static_cast<int>(page_size.divisor)
                                   : tok;
      const int64_t off = valid ? pages[i] * page_stride_bytes + in_page * token_stride_bytes : 0;
      const int dst = SwizzledChunk<kChunks>(row, chunk) * 16;
      CpAsync16(k_tile + dst, k_base + off, valid);
      CpAsync16(v_tile + dst, v_base + off, valid);
    }
  }
};

// Loads tiles of 16-bit K and V with the bulk-copy engine (sm_90+; variants with kBulk): one
// 1-D copy per key row of K or V, each thread one row (warp w: rows 16w .. 16w + 15, lanes
// 0-15 of K, 16-31 of V), completed on the stage's mbarrier, whose expected bytes thread 0
// posts. Rows are not swizzled (a 1-D copy cannot) but padded by 16 bytes, so ldmatrix reads
// of 8 rows still hit 8 bank groups. Keys past the end of the item copy the item's last key
// (finite values for the masked scores' P.V; every copy has the row size, so a stage always
// expects the same bytes). The page id of the next tile is read one tile ahead.
template <class TKV, int kHeadDim, int kTile, int kThreads>
struct BulkTileLoader {
  static_assert(sizeof(TKV) == 2, "the bulk-copy loader is for 16-bit KV caches");
  static_assert(kThreads == 2 * kTile, "one thread per row of K or V");
  static constexpr int kRowBytes = kHeadDim * static_cast<int>(sizeof(TKV));
  static constexpr int kRowStride = kRowBytes + 16;      // in shared memory
  static constexpr int kTileBytes = kTile * kRowStride;  // one of K or V in shared memory
  static constexpr uint32_t kStageTxBytes = 2 * kTile * kRowBytes;

  const char* base;         // k or v + kv_head * head_stride, in bytes
  const int32_t* page_ids;  // kv_indices + page_begin, or null (contiguous)
  int64_t page_stride_bytes, token_stride_bytes;
  FastDivisor page_size;
  int kv_last;  // the item's last key
  int row;
  bool is_v;
  int32_t next_page;  // page id of this thread's row of the tile issued next

  FLASHJIT_DEVICE void Init(const DecodeParams& p, const DecodeWorkItem& w, int kv_head) {
    const int lane = threadIdx.x % 32;
    row = threadIdx.x / 32 * 16 + lane % 16;
    is_v = lane >= 16;
    const int64_t head_bytes = kv_head * p.kv_head_stride * static_cast<int64_t>(sizeof(TKV));
    base = static_cast<const char*>(is_v ? p.v : p.k) + head_bytes;
    page_ids = p.kv_indices ? p.kv_indices + w.page_begin : nullptr;
    page_stride_bytes = p.kv_page_stride * static_cast<int64_t>(sizeof(TKV));
    token_stride_bytes = p.kv_token_stride * static_cast<int64_t>(sizeof(TKV));
    page_size = p.page_size;
    kv_last = w.kv_end - 1;
  }

  FLASHJIT_DEVICE int Token(int tile_start) const { return min(tile_start + row, kv_last); }

  // The page id of this thread's row of the tile that starts at key `tile_start`.
  FLASHJIT_DEVICE int32_t LoadPage(int tile_start) const {
    return page_ids ? __ldg(page_ids + FastDiv(Token(tile_start), page_size)) : 0;
  }
  FLASHJIT_DEVICE void PrefetchPage(int tile_start) { next_page = LoadPage(tile_start); }

  // Starts this thread's copy of the tile at `tile_start` (its row's page id `page`) into
  // k_tile / v_tile (kTileBytes each), completing on `bar`; thread 0 also arrives on `bar` with
  // the stage's bytes. Every thread of the CTA calls it for a tile.
  FLASHJIT_DEVICE void IssueTile(int tile_start, int32_t page, char* k_tile, char* v_tile,
                                 uint64_t* bar) const {
    const int tok = Token(tile_start);
    const int in_page = page_ids ? tok - static_cast<int>(FastDiv(tok, page_size)) *
                                             static_cast<int>(page_size.divisor)
                                 : tok;
    const int64_t off = page * page_stride_bytes + in_page * token_stride_bytes;
    if (threadIdx.x == 0) MbarrierArriveExpectTx(bar, kStageTxBytes);
    CpAsyncBulkG2S((is_v ? v_tile : k_tile) + row * kRowStride, base + off, kRowBytes, bar);
  }
};

}  // namespace flashjit::attention
