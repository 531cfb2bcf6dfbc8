// The draws of the two-pass top-p kernel (top_p_candidates.cuh): the element at a target mass
// above b0, among a block's kept candidates, or among a cluster's.
#pragma once

#include "sampling/top_p_state.cuh"

namespace flashjit::sampling {

// The element above b0 of this block's slice at `tgt` in [0, its mass above b0), in the order of
// the thread-by-thread walk: the holder thread (a block scan over the threads' pass-2 sums), its
// warp walks its elements; cst.index <- the element. Called by every thread of the block.
// Inlined: as a call (__noinline__) it cost every two-pass kernel 1-6 us b2b (H200, session 6,
// docs/perf/sampling.md; the one-thread walk of candidates 2 +16 us at B = 256), though it
// spilled less in clusters of 8.
template <class V, class Src>
FLASHJIT_DEVICE void PickTopPAbove(const SliceView<V, Src>& src, const TopPSelection& t, double tgt,
                                   BlockScratch& s, CandidateState& cst, bool walk_warp) {
  constexpr int kThreads = V::kThreads, kVec = V::kVec;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const double m = static_cast<double>(t.above);
  double above_total;
  const double incl = BlockInclusiveScan<kThreads>(m, s, &above_total);
  // The holder: the first thread with mass whose running sum passes the target; when rounding
  // leaves none, the last thread with mass (it then takes its last element).
  int holder = BlockReduce<kThreads>(m > 0 && incl > tgt ? static_cast<int>(threadIdx.x) : kThreads,
                                     s, OpMin());
  if (holder == kThreads)
    holder = BlockReduce<kThreads>(m > 0 ? static_cast<int>(threadIdx.x) : -1, s, OpMax());
  if (walk_warp) {
    // The holder's warp walks the holder's elements, 32 vectors a round (lane l: the holder's
    // vector l of the round): per-vector masses, a warp scan, and only the lane whose share
    // holds the target walks its own vector. Rounding can make the warp's sums differ from
    // t.above in the last bits; a target past them takes the last element with mass.
    const double before = __shfl_sync(0xffffffffu, incl - m, holder & 31);
    if (holder >= 0 && warp == holder / 32) {
      const float local = static_cast<float>(tgt - before);
      const int64_t vecs = (src.end - src.begin) / kVec;
      float base = 0.f;
      long long pick = -1, last = -1;
      for (int64_t g = holder; g < vecs; g += int64_t{32} * kThreads) {
        const int64_t v = g + static_cast<int64_t>(lane) * kThreads;
        float w[kVec];
        float vs = 0.f;
        if (v < vecs) {
          bool unused = false;
          src.Weights(src.Load(src.begin + v * kVec), w, unused);
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            if ((CandidateKey(w[j]) >> kCandidateShift) <= t.bin) w[j] = 0.f;
            vs += w[j];
          }
        } else {
#pragma unroll
          for (int j = 0; j < kVec; ++j) w[j] = 0.f;
        }
        float vincl = vs;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
          const float y = __shfl_up_sync(0xffffffffu, vincl, o);
          if (lane >= o) vincl += y;
        }
        const unsigned has = __ballot_sync(0xffffffffu, vs > 0.f);
        const unsigned hit = __ballot_sync(0xffffffffu, vs > 0.f && local < base + vincl);
        const int who = hit ? __ffs(hit) - 1 : (has ? 31 - __clz(has) : -1);
        long long mine = -1, mine_last = -1;
        if (lane == who) {
          float acc = base + (vincl - vs);
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            if (w[j] <= 0.f) continue;
            acc += w[j];
            mine_last = src.begin + v * kVec + j;
            if (mine < 0 && local < acc) mine = mine_last;
          }
          if (hit && mine < 0) mine = mine_last;  // rounding inside the vector
        }
        if (who >= 0) {
          mine = __shfl_sync(0xffffffffu, mine, who);
          mine_last = __shfl_sync(0xffffffffu, mine_last, who);
          if (hit) {
            pick = mine;
            break;
          }
          last = mine_last;
        }
        base += __shfl_sync(0xffffffffu, vincl, 31);
      }
      if (lane == 0) cst.index = pick >= 0 ? pick : last;
    }
  } else if (holder == static_cast<int>(threadIdx.x)) {
    // The same elements in the same order as pass 2, so `acc` ends at exactly t.above.
    const float local = static_cast<float>(tgt - (incl - m));
    const int64_t vecs = (src.end - src.begin) / kVec;
    constexpr int kUnroll = 8;
    float acc = 0.f;
    long long pick = -1, last = -1;
    for (int64_t g = threadIdx.x; g < vecs && pick < 0; g += kUnroll * kThreads) {
      typename Src::Raw r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t v = g + u * kThreads;
        if (v < vecs) r[u] = src.Load(src.begin + v * kVec);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t v = g + u * kThreads;
        if (v >= vecs) break;
        float w[kVec];
        bool unused = false;
        src.Weights(r[u], w, unused);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          if ((CandidateKey(w[j]) >> kCandidateShift) <= t.bin) continue;
          const long long e = src.begin + v * kVec + j;
          acc += w[j];
          last = e;
          if (pick < 0 && local < acc) pick = e;
        }
      }
    }
    cst.index = pick >= 0 ? pick : last;
  }
}

// The element of this block's kept set {key >= sel.key} at `target` in [0, kept mass of the
// slice), in the order [kept candidates (thread by thread, each its entries of its warp's region
// below t.cand_end), then the elements above b0 of thread 0, 1, ...]. Returns -1 only when the
// slice keeps no mass. REQUIRES: t.ok.
template <class V, class Src>
FLASHJIT_DEVICE long long PickTopPCandidate(const SliceView<V, Src>& src, const TopPSelection& t,
                                            double target, BlockScratch& s, CandidateState& cst,
                                            const CandidateRegions& cr, bool walk_warp) {
  constexpr int kThreads = V::kThreads;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t floor_key = t.sel.key;
  __syncthreads();
  if (threadIdx.x == 0) cst.index = -1;
  __syncthreads();
  // Kept candidates' mass in units of b0's significand ulp: integers, exact in any order.
  const int exp = static_cast<int>(t.bin >> 3) & 0xFF;
  const double unit = ldexp(1.0, (exp ? exp : 1) - 150);
  const int n = t.cand_end;
  const uint32_t* keys = cr.key + warp * cr.per_warp;
  const uint32_t* pos = cr.pos + warp * cr.per_warp;
  double mine = 0;
  for (int i = lane; i < n; i += 32)
    if (keys[i] >= floor_key) mine += static_cast<double>(SignificandOfKey(keys[i]));
  double cand_total;
  const double cand_incl = BlockInclusiveScan<kThreads>(mine, s, &cand_total);
  const double cand_mass = cand_total * unit;
  if (target < cand_mass) {
    double tgt = target / unit;
    if (tgt >= cand_total) tgt = cand_total - 0.5;  // integers: the last kept candidate
    const double lo = cand_incl - mine;
    if (mine > 0 && lo <= tgt && tgt < cand_incl) {
      double acc = lo;
      int pick = -1, last = -1;
      for (int i = lane; i < n; i += 32) {
        if (keys[i] < floor_key) continue;
        const uint32_t sig = SignificandOfKey(keys[i]);
        if (sig == 0) continue;
        last = i;
        acc += static_cast<double>(sig);
        if (pick < 0 && tgt < acc) pick = i;
      }
      cst.index = src.begin + pos[pick >= 0 ? pick : last];
    }
  } else {
    PickTopPAbove<V>(src, t, target - cand_mass, s, cst, walk_warp);
  }
  __syncthreads();
  return cst.index;
}

// kFormClusterExchange (after the exchange, t.ok), in block 0 only: the kept candidate of the row
// at `target` in [0, the kept candidates' mass), in the order of ForEachClusterCandidate over every
// block's regions (thread by thread: thread (w, l)'s entries of warp w's region in every block,
// round by round). Returns the element's index in the row (block r's slice starts at r * chunk).
// Candidate masses are integers in units of b0's significand ulp, so the scan is exact in any
// order.
template <class V>
FLASHJIT_DEVICE long long PickClusterCandidate(const TopPSelection& t, double target,
                                               BlockScratch& s, CandidateState& cst,
                                               const CandidateRegions& cr,
                                               const ClusterExchange& xs, int64_t chunk) {
  constexpr int kThreads = V::kThreads, kCluster = V::kCluster;
  const int warp = threadIdx.x / 32;
  const uint32_t floor_key = t.sel.key;
  __syncthreads();
  if (threadIdx.x == 0) cst.index = -1;
  __syncthreads();
  const int exp = static_cast<int>(t.bin >> 3) & 0xFF;
  const double unit = ldexp(1.0, (exp ? exp : 1) - 150);
  const uint32_t* keys_w = cr.key + warp * cr.per_warp;
  int end[kCluster];
  ClusterCandidateEnds<kCluster>(xs, end);
  double mine = 0;
  ForEachClusterCandidate<kCluster>(keys_w, end, [&](int, int, uint32_t key) {
    if (key >= floor_key) mine += static_cast<double>(SignificandOfKey(key));
  });
  double total;
  const double incl = BlockInclusiveScan<kThreads>(mine, s, &total);
  double tgt = target / unit;
  if (tgt >= total) tgt = total - 0.5;  // integers: the last kept candidate
  const double lo = incl - mine;
  if (mine > 0 && lo <= tgt && tgt < incl) {
    double acc = lo;
    int pick_r = -1, pick_i = -1, last_r = -1, last_i = -1;
    ForEachClusterCandidate<kCluster>(keys_w, end, [&](int r, int i, uint32_t key) {
      if (key < floor_key) return;
      const uint32_t sig = SignificandOfKey(key);
      if (sig == 0) return;
      last_r = r;
      last_i = i;
      acc += static_cast<double>(sig);
      if (pick_r < 0 && tgt < acc) {
        pick_r = r;
        pick_i = i;
      }
    });
    if (pick_r < 0) {
      pick_r = last_r;
      pick_i = last_i;
    }
    const uint32_t* pos_w = MapaGeneric(cr.pos + warp * cr.per_warp, static_cast<uint32_t>(pick_r));
    cst.index = pick_r * chunk + pos_w[pick_i];
  }
  __syncthreads();
  return cst.index;
}

// kFormClusterExchange, in the block whose mass above b0 holds the target: its element above b0
// at `tgt` in [0, that mass).
template <class V, class Src>
FLASHJIT_DEVICE long long PickTopPAboveOnly(const SliceView<V, Src>& src, const TopPSelection& t,
                                            double tgt, BlockScratch& s, CandidateState& cst,
                                            bool walk_warp) {
  __syncthreads();
  if (threadIdx.x == 0) cst.index = -1;
  __syncthreads();
  PickTopPAbove<V>(src, t, tgt, s, cst, walk_warp);
  __syncthreads();
  return cst.index;
}

}  // namespace flashjit::sampling
