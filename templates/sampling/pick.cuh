// Inverse-CDF pick: the element j (in a fixed scan order) with cum_before(j) <= target <
// cum_before(j) + w_j, over the kept weights (key >= `floor_key`). One uniform per row; tiles
// of kThreads x 4 vectors, a block scan per tile, stops at the tile that holds the target.
#pragma once

#include "sampling/block.cuh"
#include "sampling/row_source.cuh"

namespace flashjit::sampling {

struct PickScratch {
  long long index;
};

// Returns the picked element, or -1 when the kept mass the scan sees is <= target (only when
// the kept mass is 0, or by rounding; the caller then retries with target 0).
// Elements [begin, end) of the row; REQUIRES: (end - begin) % kVec == 0.
template <class V, class Src>
FLASHJIT_DEVICE long long PickIndex(const Src& src, int64_t begin, int64_t n, uint32_t floor_key,
                                    float target, BlockScratch& s, PickScratch& ps) {
  constexpr int kThreads = V::kThreads, kVec = V::kVec, kUnroll = 4;
  constexpr int64_t kStep = static_cast<int64_t>(kThreads) * kVec;
  constexpr int64_t kTile = kStep * kUnroll;
  float running = 0.f;
  // The next tile's loads are issued before this tile's scan, so one tile's memory latency
  // overlaps the previous tile's synchronisation.
  typename Src::Raw r[kUnroll];
  auto load_tile = [&](int64_t tile) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = tile + u * kStep + threadIdx.x * kVec;
      if (e < n) r[u] = src.Load(e);
    }
  };
  load_tile(begin);
  for (int64_t tile = begin; tile < n; tile += kTile) {
    float w[kUnroll][kVec];
    bool bad = false;
    float local = 0.f;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = tile + u * kStep + threadIdx.x * kVec;
      if (e < n) {
        src.Weights(r[u], w[u], bad);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) w[u][j] = 0.f;
      }
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if (KeyOfWeight(w[u][j]) < floor_key) w[u][j] = 0.f;
        local += w[u][j];
      }
    }
    if (tile + kTile < n) load_tile(tile + kTile);
    float unused_total;
    const float incl = BlockInclusiveScan<kThreads>(local, s, &unused_total);
    // Each thread's interval starts exactly where the previous thread's ends: lanes take the
    // previous lane's inclusive sum, warp leaders the previous warp's last one.
    const float shifted = __shfl_up_sync(0xffffffffu, incl, 1);
    float* last_of_warp = reinterpret_cast<float*>(s.d);
    __syncthreads();
    if (threadIdx.x % 32 == 31) last_of_warp[threadIdx.x / 32] = incl;
    if (threadIdx.x == 0) ps.index = -1;
    __syncthreads();
    const int warp = threadIdx.x / 32;
    const float before =
        threadIdx.x % 32 != 0 ? shifted : (warp == 0 ? 0.f : last_of_warp[warp - 1]);
    const float tile_total = last_of_warp[kThreads / 32 - 1];
    const float lo = running + before, hi = running + incl;
    if (lo <= target && target < hi) {
      long long pick = -1, last = -1;
      float acc = lo;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const long long e = tile + u * kStep + threadIdx.x * kVec + j;
          if (w[u][j] > 0.f) {
            last = e;
            acc += w[u][j];
            if (pick < 0 && target < acc) pick = e;
          }
        }
      ps.index = pick >= 0 ? pick : last;
    }
    __syncthreads();
    const long long found = ps.index;
    if (found >= 0) return found;
    running += tile_total;
  }
  return -1;
}

template <class V, class Src>
FLASHJIT_DEVICE long long PickIndex(const Src& src, int64_t n, uint32_t floor_key, float target,
                                    BlockScratch& s, PickScratch& ps) {
  return PickIndex<V>(src, 0, n, floor_key, target, s, ps);
}

}  // namespace flashjit::sampling
