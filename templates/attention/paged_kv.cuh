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
// of kRows rows (row0 + i * kRowsPerPass); the page ids of the next tile are read one tile ahead
// so that the page table lookup is off the critical path. A tile costs one division: from a
// thread's first row to its next, the place in the cache moves by a fixed number of pages and
// tokens within a page (DecodeParams::page_row_pages / page_row_tokens), so the other rows step
// from the first instead of dividing (session 20: the issue side was 174 of an fp8 step's 464
// instructions a warp).
template <class TKV, int kHeadDim, int kTile, int kThreads>
struct PagedTileLoader {
  static constexpr int kChunks = kHeadDim * static_cast<int>(sizeof(TKV)) / 16;  // per row
  static constexpr int kElemsPerChunk = 16 / static_cast<int>(sizeof(TKV));
  static constexpr int kRowsPerPass = kThreads / kChunks;
  static constexpr int kRows = kTile / kRowsPerPass;  // rows per thread
  static_assert(kThreads % kChunks == 0 && kTile % kRowsPerPass == 0, "tile does not divide");
  static constexpr int kTileBytes = kTile * kHeadDim * static_cast<int>(sizeof(TKV));
  // Whether a thread's rows share one swizzle (row % 8 the same for all of them): their shared
  // memory offsets are then the first row's plus a constant (all but 16-bit D 256).
  static constexpr bool kSwizzleInvariant = kRowsPerPass % (kChunks < 8 ? kChunks : 8) == 0;
  // Which of DecodeParams::page_row_pages / page_row_tokens steps between a thread's rows.
  static constexpr int kStep = kRowsPerPass == 4    ? 0
                               : kRowsPerPass == 8  ? 1
                               : kRowsPerPass == 16 ? 2
                                                    : 3;
  static_assert(kRowsPerPass == 4 << kStep, "rows a pass: 4, 8, 16 or 32");
  // fp8 at D 256 (255 registers, Gemma-2) keeps the loader's earlier form: a division for each
  // row and per-row shared-memory offsets, nothing carried from a tile's page read to its issue
  // but the page ids. With the new forms here and in the epilogue (kEpilogueLayout) its plans of
  // one CTA an SM at 2 stages read 5-17 % slower (session 20, calls 2-3); with the earlier ones,
  // 2-6 % faster than before the session (call 4). Which form cost it was not isolated.
  static constexpr bool kDivideEachRow = sizeof(TKV) == 1 && kHeadDim >= 256;

  // The kernel's parameters: Step reads the row steps and the page size from there when needed
  // (no registers held for them). Place divides by a copy of the page size, as before session 20.
  const DecodeParams* params;
  FastDivisor page_size;
  const char* k_base;  // k + kv_head * head_stride + chunk column, in bytes
  const char* v_base;
  const int32_t* page_ids;  // kv_indices + page_begin, or null (contiguous)
  // Below 2^32 (CheckKVStrides): an offset is two 32 x 32 -> 64-bit multiplies.
  uint32_t page_stride_bytes, token_stride_bytes;
  int kv_end;
  int chunk, row0;
  // This thread's rows of one tile: page ids (0 for a row past the item's end: its copy reads
  // nothing and zero-fills) and the first row's token index in its page (contiguous: its key;
  // unused where kDivideEachRow).
  struct TileRows {
    uint32_t page[kRows];
    uint32_t in0;
  };
  TileRows next;  // of the tile fetched next

  FLASHJIT_DEVICE void Init(const DecodeParams& p, const DecodeWorkItem& w, int kv_head) {
    InitHead(p, kv_head);
    InitItem(p, w);
  }
  // The parts of Init that depend on the kv head and the kernel parameters only, and on the work
  // item (a CTA that knows its head before its item may run InitHead first).
  FLASHJIT_DEVICE void InitHead(const DecodeParams& p, int kv_head) {
    params = &p;
    page_size = p.page_size;
    chunk = threadIdx.x % kChunks;
    row0 = threadIdx.x / kChunks;
    const int64_t head_bytes = kv_head * p.kv_head_stride * static_cast<int64_t>(sizeof(TKV));
    k_base = static_cast<const char*>(p.k) + head_bytes + chunk * 16;
    v_base = static_cast<const char*>(p.v) + head_bytes + chunk * 16;
    page_stride_bytes = static_cast<uint32_t>(p.kv_page_stride * sizeof(TKV));
    token_stride_bytes = static_cast<uint32_t>(p.kv_token_stride * sizeof(TKV));
  }
  FLASHJIT_DEVICE void InitItem(const DecodeParams& p, const DecodeWorkItem& w) {
    page_ids = p.kv_indices ? p.kv_indices + w.page_begin : nullptr;
    kv_end = w.kv_end;
  }

  // The place of key `tok` in the cache: its page (index into page_ids) and token in the page.
  // A contiguous cache is one page: the key itself.
  FLASHJIT_DEVICE void Place(uint32_t tok, uint32_t& page, uint32_t& in) const {
    page = 0;
    in = tok;
    if (page_ids) {
      page = FastDiv(tok, page_size);
      in = tok - page * page_size.divisor;
    }
  }

  // From one of this thread's rows to its next: `page` and `in` (token index in the page). A
  // contiguous cache is one page of 2^31 tokens: `in` is the key and never wraps.
  FLASHJIT_DEVICE void Step(uint32_t& page, uint32_t& in) const {
    const uint32_t wrap = params->page_size.divisor;
    page += params->page_row_pages[kStep];
    in += params->page_row_tokens[kStep];
    if (in >= wrap) {
      in -= wrap;
      ++page;
    }
  }

  // Reads the page ids of this thread's rows of the tile that starts at key `tile_start`.
  FLASHJIT_DEVICE void LoadPages(int tile_start, TileRows& rows) const {
    const uint32_t tok0 = static_cast<uint32_t>(tile_start + row0);
    uint32_t page, in;
    Place(tok0, page, in);
    rows.in0 = in;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      if (i > 0) {
        if constexpr (kDivideEachRow)
          Place(tok0 + i * kRowsPerPass, page, in);
        else
          Step(page, in);
      }
      rows.page[i] = 0;
      if (page_ids && static_cast<int>(tok0) + i * kRowsPerPass < kv_end)
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
    uint32_t page = 0, in = kDivideEachRow ? 0u : rows.in0;  // page: unused (ids in rows)
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int row = row0 + i * kRowsPerPass;
      const bool valid = tile_start + row < kv_end;
      if constexpr (kDivideEachRow)
        Place(static_cast<uint32_t>(tile_start + row), page, in);
      else if (i > 0)
        Step(page, in);
      const uint64_t off = static_cast<uint64_t>(rows.page[i]) * page_stride_bytes +
                           static_cast<uint64_t>(valid ? in : 0u) * token_stride_bytes;
      const int dst =
          kSwizzleInvariant && !kDivideEachRow
              ? SwizzledChunk<kChunks>(row0, chunk) * 16 + i * kRowsPerPass * kChunks * 16
              : SwizzledChunk<kChunks>(row, chunk) * 16;
      CpAsync16(k_tile + dst, k_base + off, valid);
      CpAsync16(v_tile + dst, v_base + off, valid);
    }
  }
};

}  // namespace flashjit::attention
