// The K/V tile loader for a page size known at compile time: a power of two P that divides the
// tile (1 .. kTile keys), for work items whose tiles start on a page boundary (BatchDecode::Plan
// rounds a window's first key down to a page; chunks and tail pieces are whole tiles).
//
// A thread copies one 16-byte chunk column of the rows row0 + i * R (R = rows a pass). With
// tiles on page boundaries, row i lies in page (row0 + i R) / P of the tile, at token
// (row0 + i R) % P of it, both fixed for the thread:
//   R >= P: every row its own page, rows R / P pages apart, all at token row0 % P;
//   R <  P: P / R consecutive rows share a page, at tokens row0, row0 + R, ...
// So a tile takes only its page ids (read one tile ahead, as PagedTileLoader's) and one
// multiply-add a row: no division, no stepping between rows (session 30: PagedTileLoader's
// issue and page reads were about 270 of bf16 D 128's 595 SASS instructions a warp-step).
// Same interface as PagedTileLoader (paged_kv.cuh); the swizzle is its SwizzledChunk.
#pragma once

#include "attention/mma_sm80.cuh"
#include "attention/paged_kv.cuh"

namespace flashjit::attention {

template <class TKV, int kHeadDim, int kTile, int kThreads, int kPageSize>
struct FixedPageTileLoader {
  // The tile's geometry and shared-memory layout: PagedTileLoader's.
  using Paged = PagedTileLoader<TKV, kHeadDim, kTile, kThreads>;
  static constexpr int kChunks = Paged::kChunks, kRowsPerPass = Paged::kRowsPerPass;
  static constexpr int kRows = Paged::kRows, kTileBytes = Paged::kTileBytes;
  static constexpr bool kSwizzleInvariant = Paged::kSwizzleInvariant;
  static_assert(kPageSize >= 1 && kPageSize <= kTile && kTile % kPageSize == 0 &&
                    (kPageSize & (kPageSize - 1)) == 0,
                "a fixed page size is a power of two that divides the tile");
  // Rows of a thread that share a page, the page ids it reads a tile, and the page-table entries
  // between consecutive ones.
  static constexpr int kRowsPerId = kRowsPerPass >= kPageSize ? 1 : kPageSize / kRowsPerPass;
  static constexpr int kIds = kRows / kRowsPerId;
  static constexpr int kIdStride = kRowsPerPass >= kPageSize ? kRowsPerPass / kPageSize : 1;

  const char* k_base;          // k + kv_head * head_stride + chunk column + token row0 % P, bytes
  const char* v_base;          // the same in v
  const int32_t* page_ids;     // kv_indices + page_begin + row0 / P
  uint32_t page_stride_bytes;  // below 2^32 (CheckKVStrides), as the token stride
  uint32_t token_stride_bytes;
  int kv_end;
  int chunk, row0;
  // The page ids of this thread's rows of one tile (0 past the item's end: those copies read
  // nothing and zero-fill).
  struct TileRows {
    uint32_t page[kIds];
  };
  TileRows next;  // of the tile fetched next

  FLASHJIT_DEVICE void Init(const DecodeParams& p, const DecodeWorkItem& w, int kv_head) {
    InitHead(p, kv_head);
    InitItem(p, w);
  }
  FLASHJIT_DEVICE void InitHead(const DecodeParams& p, int kv_head) {
    chunk = threadIdx.x % kChunks;
    row0 = threadIdx.x / kChunks;
    page_stride_bytes = static_cast<uint32_t>(p.kv_page_stride * sizeof(TKV));
    token_stride_bytes = static_cast<uint32_t>(p.kv_token_stride * sizeof(TKV));
    const int64_t offset = kv_head * p.kv_head_stride * static_cast<int64_t>(sizeof(TKV)) +
                           chunk * 16 + static_cast<int64_t>(row0 % kPageSize) * token_stride_bytes;
    k_base = static_cast<const char*>(p.k) + offset;
    v_base = static_cast<const char*>(p.v) + offset;
  }
  FLASHJIT_DEVICE void InitItem(const DecodeParams& p, const DecodeWorkItem& w) {
    page_ids = p.kv_indices + w.page_begin + row0 / kPageSize;
    kv_end = w.kv_end;
  }

  // Reads the page ids of this thread's rows of the tile that starts at key `tile_start` (a
  // multiple of the page size). A page id is read when its page's first row of this thread lies
  // before the item's end.
  FLASHJIT_DEVICE void LoadPages(int tile_start, TileRows& rows) const {
    const int32_t* ids = page_ids + tile_start / kPageSize;
    const int left = kv_end - tile_start - row0;  // row i is in the item when i * R < left
#pragma unroll
    for (int j = 0; j < kIds; ++j)
      rows.page[j] = j * kRowsPerId * kRowsPerPass < left
                         ? static_cast<uint32_t>(__ldg(ids + j * kIdStride))
                         : 0u;
  }

  FLASHJIT_DEVICE void PrefetchPages(int tile_start) { LoadPages(tile_start, next); }

  FLASHJIT_DEVICE void IssueTile(int tile_start, char* k_tile, char* v_tile) const {
    IssueTile(tile_start, next, k_tile, v_tile);
  }

  // Starts the copy of the tile at `tile_start` (pages from LoadPages) into k_tile and v_tile
  // (shared, kTileBytes each). Commits nothing.
  FLASHJIT_DEVICE void IssueTile(int tile_start, const TileRows& rows, char* k_tile,
                                 char* v_tile) const {
    const int left = kv_end - tile_start - row0;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int row = row0 + i * kRowsPerPass;
      // a page's rows of this thread lie kRowsPerPass tokens apart
      const uint64_t off =
          static_cast<uint64_t>(rows.page[i / kRowsPerId]) * page_stride_bytes +
          static_cast<uint64_t>(token_stride_bytes) * ((i % kRowsPerId) * kRowsPerPass);
      const int dst = kSwizzleInvariant ? SwizzledChunk<kChunks>(row0, chunk) * 16 +
                                              i * kRowsPerPass * kChunks * 16
                                        : SwizzledChunk<kChunks>(row, chunk) * 16;
      const bool valid = i * kRowsPerPass < left;
      CpAsync16(k_tile + dst, k_base + off, valid);
      CpAsync16(v_tile + dst, v_base + off, valid);
    }
  }
};

// The loader of a decode variant: fixed page size where the variant has one (kPageSize > 0).
template <class V, int kTile, int kThreads>
using DecodeTileLoader =
    typename Select<(V::kPageSize > 0),
                    FixedPageTileLoader<typename V::DTypeKV, V::kHeadDim, kTile, kThreads,
                                        (V::kPageSize > 0 ? V::kPageSize : 1)>,
                    PagedTileLoader<typename V::DTypeKV, V::kHeadDim, kTile, kThreads>>::type;

}  // namespace flashjit::attention
