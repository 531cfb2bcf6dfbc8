// Paged KV addressing and the cp.async loader of K/V tiles into shared memory.
//
// A tile is kTile consecutive keys of one request and one kv head, D elements each, stored in
// shared memory as rows of 16-byte chunks with an XOR swizzle (chunk ^ row % 8) so that
// ldmatrix reads of 8 rows hit 8 different bank groups. Keys past the end of the item are
// zero-filled (masked scores must meet finite values in P.V).
#pragma once

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
// lookup is off the critical path, and the rows' positions in their pages are found then too
// (one division a row and tile, not two: the issue side was a fifth of an fp8 step).
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
  // Below 2^32 (CheckKVStrides): an offset is two 32 x 32 -> 64-bit multiplies.
  uint32_t page_stride_bytes, token_stride_bytes;
  FastDivisor page_size;
  int kv_end;
  int chunk, row0;
  // Whether LoadPages keeps each row's token index in its page for IssueTile (kRows more
  // registers) or IssueTile divides again: kept for up to 4 rows a thread (fp8 at D <= 128,
  // 16-bit at D 64). More rows would cost registers where they are scarce: fp8 at D 256 (255
  // registers) spilled 72 bytes with them against 52 without and read Gemma-2's shapes 3-8 %
  // slower (session 17, call 4).
  static constexpr bool kKeepInPage = kRows <= 4;
  // This thread's rows of one tile: page id and token index in the page (contiguous: the key);
  // both 0 for a row past the item's end (its copy reads nothing and zero-fills).
  struct TileRows {
    uint32_t page[kRows];
    uint32_t in_page[kKeepInPage ? kRows : 1];
  };
  TileRows next;  // of the tile fetched next

  FLASHJIT_DEVICE void Init(const DecodeParams& p, const DecodeWorkItem& w, int kv_head) {
    InitHead(p, kv_head);
    InitItem(p, w);
  }
  // The parts of Init that depend on the kv head and the kernel parameters only, and on the work
  // item (a CTA that knows its head before its item may run InitHead first).
  FLASHJIT_DEVICE void InitHead(const DecodeParams& p, int kv_head) {
    chunk = threadIdx.x % kChunks;
    row0 = threadIdx.x / kChunks;
    const int64_t head_bytes = kv_head * p.kv_head_stride * static_cast<int64_t>(sizeof(TKV));
    k_base = static_cast<const char*>(p.k) + head_bytes + chunk * 16;
    v_base = static_cast<const char*>(p.v) + head_bytes + chunk * 16;
    page_stride_bytes = static_cast<uint32_t>(p.kv_page_stride * sizeof(TKV));
    token_stride_bytes = static_cast<uint32_t>(p.kv_token_stride * sizeof(TKV));
    page_size = p.page_size;
  }
  FLASHJIT_DEVICE void InitItem(const DecodeParams& p, const DecodeWorkItem& w) {
    page_ids = p.kv_indices ? p.kv_indices + w.page_begin : nullptr;
    kv_end = w.kv_end;
  }

  // Reads the page ids of this thread's rows of the tile that starts at key `tile_start`, and
  // finds the rows' places in their pages.
  FLASHJIT_DEVICE void LoadPages(int tile_start, TileRows& rows) const {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int tok = tile_start + row0 + i * kRowsPerPass;
      rows.page[i] = 0;
      if constexpr (kKeepInPage) rows.in_page[i] = 0;
      if (tok >= kv_end || !page_ids) continue;
      const uint32_t page = FastDiv(tok, page_size);
      if constexpr (kKeepInPage) rows.in_page[i] = tok - page * page_size.divisor;
      rows.page[i] = static_cast<uint32_t>(__ldg(page_ids + page));
    }
  }

  // Reads the page ids of the tile that starts at key `tile_start` (issue before IssueTile).
  FLASHJIT_DEVICE void PrefetchPages(int tile_start) { LoadPages(tile_start, next); }

  // Starts the copy of the tile at `tile_start` (whose pages were prefetched) into k_tile and
  // v_tile (shared, kTileBytes each). Commits nothing.
  FLASHJIT_DEVICE void IssueTile(int tile_start, char* k_tile, char* v_tile) const {
    IssueTile(tile_start, next, k_tile, v_tile);
  }

  // As above, with the tile's rows given (from LoadPages).
  FLASHJIT_DEVICE void IssueTile(int tile_start, const TileRows& rows, char* k_tile,
                                 char* v_tile) const {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int row = row0 + i * kRowsPerPass;
      const int tok = tile_start + row;
      const bool valid = tok < kv_end;
      uint32_t in_page = valid ? tok : 0;  // contiguous: the key itself
      if (page_ids) {
        if constexpr (kKeepInPage)
          in_page = rows.in_page[i];
        else if (valid)
          in_page = tok - FastDiv(tok, page_size) * page_size.divisor;
      }
      const uint64_t off = static_cast<uint64_t>(rows.page[i]) * page_stride_bytes +
                           static_cast<uint64_t>(in_page) * token_stride_bytes;
      const int dst = SwizzledChunk<kChunks>(row, chunk) * 16;
      CpAsync16(k_tile + dst, k_base + off, valid);
      CpAsync16(v_tile + dst, v_base + off, valid);
    }
  }
};

}  // namespace flashjit::attention
