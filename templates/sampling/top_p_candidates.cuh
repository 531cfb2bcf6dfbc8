// Top-p sampling in two passes over a slice instead of four (three radix digits and a pick):
//
//   pass 1 (HBM):  histogram of the weights' key bits 30..20 (exponent and 3 significand bits:
//                  one exponent per bin, so bin masses are exact integer sums) -> the boundary
//                  bin b0 that holds the top-p threshold, and the mass strictly above it.
//   pass 2 (L2 or the slice cache): each thread sums the weights above b0 that it owns, in a
//                  fixed order, and each warp copies b0's elements (key, position) into its own
//                  region of shared memory, in a fixed order (ballot + popc: no shared counter,
//                  the same contents on every run). kFormLaneColumns (A/B): each lane copies
//                  its own b0 elements into its own column of the warp's region (entry j of
//                  lane l at j * 32 + l): no ballots, no warp-wide count; a lane past its
//                  column's end overflows as a warp past its region does.
//   digits 2, 3:   bits 19..10 and 9..0, over those candidates only. The threshold T and the
//                  kept set {key >= T} are exactly the radix select's (radix_select.cuh): same
//                  keys, same target, same rule at the boundary (ties all kept).
//   draw:          inverse CDF over the owner block's kept set in the order [kept candidates,
//                  then the elements above b0 thread by thread]: a block scan over per-thread
//                  masses finds the one thread whose share holds the target; its warp walks
//                  that thread's elements again, 32 vectors at a time (a warp scan over
//                  per-vector masses), or (without kFormWarpWalk, for A/B) the thread
//                  alone, one element after the other.
//
// Passes 1 and 2 read probabilities as bit patterns tested as integers (kFormBits: about 13
// instead of 18 instructions per element in pass 1, 10 instead of 14 in pass 2, NVRTC sm_90a):
// the same weights, keys, bins and masses as the float tests. Pass 1 adds into lane-private
// copies of the bins where a row's bulk lies (kFormLaneWindow, LaneWindow below): no bank
// conflicts between the lanes of a warp there.
//
// Clusters with kFormClusterExchange: after pass 2 each block publishes its b0 size, flags and
// mass above b0 (and each thread its candidates' bound), one cluster barrier, and every block
// reads the others' headers. Digits 2 and 3 then run in every block over all blocks' candidates,
// read in place through distributed shared memory: every block builds the same histograms and
// takes the same decisions with no merge and no cluster barrier. The draw needs none either:
// every block knows the kept candidates' mass (exact, from the digits) and each block's mass
// above b0, so all compute the same target from the same uniform; in the order [kept candidates
// of every block, then the elements above b0 block by block], block 0 draws a candidate (it
// reads every block's regions), or the block whose mass above b0 holds the target walks its
// slice. One last cluster barrier keeps every block's shared memory alive until all have read it.
//
// A warp region that overflows (very many weights in one bin, e.g. a uniform row) makes every
// block of the cluster run digits 2 and 3 over its slice and draw with PickIndex, as before.
// Keys drop the sign bit: a weight of -0.0 is key 0, like +0.0.
//
// Files: the selection (TopPSelect) here; its state in top_p_state.cuh, a digit's scan in
// top_p_scan.cuh, the draws in top_p_pick.cuh.
#pragma once

#include "sampling/philox.cuh"
#include "sampling/top_p_pick.cuh"
#include "sampling/top_p_scan.cuh"
#include "sampling/top_p_state.cuh"

namespace flashjit::sampling {

// kFormDigit3Push, digit 3's histogram (TopPSelect): every key of digit 3's bin b is base | b
// (all its other bits are the prefix's), so the bin's count alone gives its mass. Each warp
// walks its own region (`keys_w`, this block's shared memory; entries lane, lane + 32, ... <
// cand_end), equal keys of a warp's round counted once (match), and every count is added into
// every block's spare words h.count[kDigit3PushWords + b] (zeroed before the exchange's cluster
// barrier; nothing else uses them after it). One cluster barrier, then each block expands the
// counts into the histogram the scan reads: the same integers as the per-candidate adds (c x
// the same halves).
template <class V>
FLASHJIT_DEVICE void Digit3PushFill(RadixHistogram& h, const uint32_t* keys_w, int cand_end,
                                    uint32_t prefix, uint32_t base) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Digit3PushForm<V>()) {
    constexpr int kCluster = V::kCluster, kThreads = V::kThreads;
    const int lane = threadIdx.x % 32;
    const int top = __reduce_max_sync(0xffffffffu, cand_end);
    for (int i0 = 0; i0 < top; i0 += 32) {
      const int i = i0 + lane;
      const uint32_t key = i < cand_end ? keys_w[i] : 0u;
      const bool m = i < cand_end && (key >> 10) == prefix;
      if (__any_sync(0xffffffffu, m)) {
        const unsigned peers = __match_any_sync(0xffffffffu, m ? key & 0x3FFu : 0xFFFFFFFFu);
        if (m && lane == __ffs(peers) - 1) {
          const uint32_t* at = &h.count[kDigit3PushWords + (key & 0x3FFu)];
#pragma unroll
          for (int r = 0; r < kCluster; ++r)
            RedSharedClusterAdd(MapaSharedCluster(at, static_cast<uint32_t>(r)),
                                static_cast<uint32_t>(__popc(peers)));
        }
      }
    }
    ClusterSync();  // every block's counts have landed in every block
    for (int b = threadIdx.x; b < 1024; b += kThreads) {
      const uint32_t c = h.count[kDigit3PushWords + b];
      const uint32_t sig = SignificandOfKey(base | static_cast<uint32_t>(b));
      h.count[b] = c;
      h.sig_hi[b] = c * (sig >> 12);
      h.sig_lo[b] = c * (sig & 0xFFFu);
    }
  }
#endif
}

template <class V, class Src>
FLASHJIT_DEVICE TopPSelection TopPSelect(const SliceView<V, Src>& src, float p, RadixHistogram& h,
                                         BlockScratch& s, ClusterSlots& cs, CandidateState& cst,
                                         const CandidateRegions& cr, int form,
                                         const LaneWindow& win, const ClusterExchange& xs,
                                         uint64_t* stamps) {
  constexpr int kThreads = V::kThreads, kCluster = V::kCluster, kVec = V::kVec;
  static_assert(kCluster == 1 || kThreads >= 256, "cluster variants need >= 256 threads");
  const int shifts[3] = {kCandidateShift, 10, 0};
  const int widths[3] = {11, 10, 10};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  TopPSelection out;
  SelectResult& res = out.sel;
  uint32_t prefix = 0;
  double above_mass = 0, target = 0, b0_count = 0;
  // kFormClusterExchange (below: `exchanged` once it ran). No state of its own is carried from
  // digit to digit (the passes run at the register limit): res.local holds the kept candidates'
  // mass so far, with the current bin whole.
  form = CandidateForm<V>(form);  // V::kForm: constants, the other forms' code compiled out
  const bool exchange = ClusterExchangeForm<V>(form);
  constexpr bool kPush = Digit3PushForm<V>();  // kFormDigit3Push: digit 3's counts pushed
  // kFormEndsWithHeader: this thread's candidate bounds in every block, loaded with the
  // exchange's header (digit 2's fill uses them; without the bit it loads them itself).
  constexpr bool kEndsEarly = EndsWithHeaderForm<V>();
  int xends[kCluster];
  bool bad = false, bad_known = false;  // bad_known: res.bad reduced with pass 2's flags
  uint32_t bad_bits = 0;                // kFormBits: the invalid weights' bit patterns
  for (int d = 0; d < 3; ++d) {
    const int shift = shifts[d], bins = 1 << widths[d];
    const int hi_shift = shift + widths[d];
    const uint32_t base = d == 0 ? 0u : prefix << hi_shift;
    __syncthreads();  // the previous digit may still read the histogram
    // kFormDigit3Push at digit 3: the pushed counts overwrite every bin after the cluster barrier.
    const bool pushed = kPush && d == 2 && exchange && out.ok;
    if (!pushed)
      for (int b = threadIdx.x; b < bins; b += kThreads) h.count[b] = h.sig_hi[b] = h.sig_lo[b] = 0;
    const bool windowed = d == 0 && (form & kFormBits) && (form & kFormLaneWindow);
    if (windowed) {
      for (int i = threadIdx.x; i < kLaneWindowBins * 32 / 4; i += kThreads) {
        reinterpret_cast<uint4*>(win.hi)[i] = make_uint4(0u, 0u, 0u, 0u);
        reinterpret_cast<uint4*>(win.lo)[i] = make_uint4(0u, 0u, 0u, 0u);
      }
    }
    if (!pushed) __syncthreads();
    // The first digit needs no counts (two shared atomics per element instead of three): empty
    // bins are those without mass, and the boundary bin's size comes from pass 2.
    auto add = [&](uint32_t key) {
      const int b = (key >> shift) & (bins - 1);
      const uint32_t sig = SignificandOfKey(key);
      if (d > 0) atomicAdd(&h.count[b], 1u);
      atomicAdd(&h.sig_hi[b], sig >> 12);
      atomicAdd(&h.sig_lo[b], sig & 0xFFFu);
    };
    if (windowed) {
      // As below, but each weight's two halves go into its lane's copy of a window bin, or
      // (outside the window) into the shared histogram. Shared-memory byte addresses: this
      // lane's copy of window bin 0 and the histogram's high halves; each low half lies a fixed
      // distance after its high half (win.lo = win.hi + kLaneWindowBins * 32, sig_lo = sig_hi +
      // kRadixBins).
      const uint32_t win_lane = static_cast<uint32_t>(__cvta_generic_to_shared(win.hi + lane));
      const uint32_t hist_hi = static_cast<uint32_t>(__cvta_generic_to_shared(h.sig_hi));
      constexpr uint32_t kWinLo = kLaneWindowBins * 32 * 4, kHistLo = kRadixBins * 4;
      ForEachVec(src, [&](int64_t, const typename Src::Raw& r) {
        uint32_t k[kVec];
        src.WeightBits(r, k, bad_bits);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const uint32_t b = k[j] >> kCandidateShift, t = k[j] >> 12;
          const uint32_t w = b - win.first;  // past the window: >= kLaneWindowBins (unsigned)
          const bool in = w < static_cast<uint32_t>(kLaneWindowBins);
          const uint32_t at_hi = in ? win_lane + w * 128 : hist_hi + b * 4;
          const uint32_t at_lo = at_hi + (in ? kWinLo : kHistLo);
          RedSharedAdd(at_hi, SignificandHigh(t));
          RedSharedAdd(at_lo, k[j] & 0xFFFu);
        }
      });
      __syncthreads();
      // The window's bins: warp by warp, the 32 lane copies summed (fixed order: the same
      // integers), into the shared histogram, whose window bins nothing else wrote.
      for (int wb = warp; wb < kLaneWindowBins; wb += kThreads / 32) {
        const uint32_t hi = WarpSumU32(win.hi[wb * 32 + lane]);
        const uint32_t lo = WarpSumU32(win.lo[wb * 32 + lane]);
        if (lane == 0) {
          h.sig_hi[win.first + wb] = hi;
          h.sig_lo[win.first + wb] = lo;
        }
      }
    } else if (d == 0 && (form & kFormBits)) {
      // Bits at most 0x7F7FFFFF: the bin needs no mask.
      ForEachVec(src, [&](int64_t, const typename Src::Raw& r) {
        uint32_t k[kVec];
        src.WeightBits(r, k, bad_bits);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const uint32_t b = k[j] >> kCandidateShift, t = k[j] >> 12;
          atomicAdd(&h.sig_hi[b], SignificandHigh(t));
          atomicAdd(&h.sig_lo[b], k[j] & 0xFFFu);
        }
      });
    } else if (d == 0) {
      ForEachVec(src, [&](int64_t, const typename Src::Raw& r) {
        float w[kVec];
        src.Weights(r, w, bad);
#pragma unroll
        for (int j = 0; j < kVec; ++j) add(CandidateKey(w[j]));
      });
    } else if (pushed) {
      Digit3PushFill<V>(h, cr.key + warp * cr.per_warp, out.cand_end, prefix, base);
    } else if (exchange && out.ok) {
      // Every block's candidates, where they lie: the same histogram in every block.
      int end[kCluster];
      if constexpr (kEndsEarly) {
#pragma unroll
        for (int r = 0; r < kCluster; ++r) end[r] = xends[r];
      } else {
        ClusterCandidateEnds<kCluster>(xs, end);
      }
      ForEachClusterCandidate<kCluster, ClusterKeyRounds<V>()>(cr.key + warp * cr.per_warp, end,
                                                               [&](int, int, uint32_t key) {
                                                                 if ((key >> hi_shift) == prefix)
                                                                   add(key);
                                                               });
    } else if (out.ok) {
      const uint32_t* keys = cr.key + warp * cr.per_warp;
      for (int i = lane; i < out.cand_end; i += 32) {
        const uint32_t key = keys[i];
        if ((key >> hi_shift) == prefix) add(key);
      }
    } else {
      ForEachVec(src, [&](int64_t, const typename Src::Raw& r) {
        float w[kVec];
        bool unused = false;
        src.Weights(r, w, unused);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const uint32_t key = CandidateKey(w[j]);
          if ((key >> hi_shift) == prefix) add(key);
        }
      });
    }
    __syncthreads();
    if (d == 0)
      Stamp<V>(stamps, kStampPass1);
    else
      Stamp<V>(stamps, d == 1 ? kStampFill1 : kStampFill2);

    // From here on as in RadixSelect's mass mode: merge over the cluster, scan from the top,
    // the first position where the running mass reaches the target.
    const int per = bins / kThreads > 0 ? bins / kThreads : 1;
    const int q0 = threadIdx.x * per;
    constexpr int kMaxPer = kRadixBins / kThreads > 0 ? kRadixBins / kThreads : 1;
    double own[kCluster > 1 ? kMaxPer : 1];
    // Exchanged: every block built the whole histogram itself; no merge. (OwnBinMasses runs
    // either way: under the condition as well, NVRTC's ptxas spilled 3x more, 634 B of loads.)
    const bool exchanged = exchange && out.ok;
    if constexpr (kCluster > 1) OwnBinMasses(h, bins, q0, per, base, shift, own);
    if (kCluster > 1 && !exchanged) {
      ClusterSync();  // every block's histogram is complete
      const int part = bins / kCluster;
      const int first = static_cast<int>(ClusterCtaRank()) * part;
      if (form & kFormClusterLean) {
        // The same sums, every block's values of a bin in flight at once (fully unrolled: one
        // distributed-shared-memory round trip per bin instead of kCluster / 2).
        for (int b = first + threadIdx.x; b < first + part; b += kThreads) {
          uint32_t c = 0, hi = 0, lo = 0;
#pragma unroll
          for (int r = 0; r < kCluster; ++r) {
            if (d > 0) c += LdSharedClusterU32(MapaSharedCluster(&h.count[b], r));
            hi += LdSharedClusterU32(MapaSharedCluster(&h.sig_hi[b], r));
            lo += LdSharedClusterU32(MapaSharedCluster(&h.sig_lo[b], r));
          }
#pragma unroll
          for (int r = 0; r < kCluster; ++r) {
            if (d > 0) StSharedClusterU32(MapaSharedCluster(&h.count[b], r), c);
            StSharedClusterU32(MapaSharedCluster(&h.sig_hi[b], r), hi);
            StSharedClusterU32(MapaSharedCluster(&h.sig_lo[b], r), lo);
          }
        }
      } else {
        for (int b = first + threadIdx.x; b < first + part; b += kThreads) {
          uint32_t c = 0, hi = 0, lo = 0;
#pragma unroll 2
          for (int r = 0; r < kCluster; ++r) {
            if (d > 0) c += LdSharedClusterU32(MapaSharedCluster(&h.count[b], r));
            hi += LdSharedClusterU32(MapaSharedCluster(&h.sig_hi[b], r));
            lo += LdSharedClusterU32(MapaSharedCluster(&h.sig_lo[b], r));
          }
#pragma unroll 2
          for (int r = 0; r < kCluster; ++r) {
            if (d > 0) StSharedClusterU32(MapaSharedCluster(&h.count[b], r), c);
            StSharedClusterU32(MapaSharedCluster(&h.sig_hi[b], r), hi);
            StSharedClusterU32(MapaSharedCluster(&h.sig_lo[b], r), lo);
          }
        }
      }
      ClusterSync();  // every block holds the merged histogram
      if (d == 0) Stamp<V>(stamps, kStampMerge0);
    }

    double mass_total = 0, m_above = 0;
    int q = -1;
    // V::kFastScan: the same sums with fewer barriers (TopPScanDigit); compiled out otherwise.
    if constexpr (V::kFastScan && kThreads >= 64 && kThreads <= 512) {
      // V::kWarpScan (with kExactPrefix): digits 2-3 in integers, 1 block barrier.
      if (V::kWarpScan && d > 0)
        q = TopPScanDigitWarp<kThreads>(h, bins, base, above_mass, target, mass_total, m_above);
      else
        q = TopPScanDigit<kThreads, V::kExactPrefix>(h, d, bins, base, shift, above_mass, p, target,
                                                     mass_total, m_above, s);
      if (d == 0) res.total = mass_total;
      if (q < 0) break;  // nothing counted: keep everything (key 0); out.ok stays false
    } else {
      double my_mass = 0;
      for (int i = 0; i < per && q0 + i < bins; ++i) {
        const int b = bins - 1 - (q0 + i);
        my_mass += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
      }
      const double mass_incl = BlockInclusiveScan<kThreads>(my_mass, s, &mass_total);
      if (d == 0) {
        res.total = mass_total;
        target = static_cast<double>(p) * mass_total;
      }
      double run_m = mass_incl - my_mass;
      int found = 0x7fffffff, lowest = -1;
      for (int i = 0; i < per && q0 + i < bins; ++i) {
        const int b = bins - 1 - (q0 + i);
        if (d == 0 ? (h.sig_hi[b] | h.sig_lo[b]) == 0 : h.count[b] == 0) continue;
        lowest = q0 + i;
        run_m += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
        if (above_mass + run_m >= target && found == 0x7fffffff) found = q0 + i;
      }
      q = BlockReduce<kThreads>(found, s, OpMin());
      if (q == 0x7fffffff) q = BlockReduce<kThreads>(lowest, s, OpMax());  // rounding: lowest bin
      if (q < 0) break;  // nothing counted: keep everything (key 0); out.ok stays false
      for (int i = 0; i < per && q0 + i < q; ++i) {
        const int b = bins - 1 - (q0 + i);
        m_above += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
      }
      m_above = BlockReduce<kThreads>(m_above, s, OpAdd());
    }
    const int bin = bins - 1 - q;
    if (d == 0) {
      Stamp<V>(stamps, kStampScan0);
      // Pass 2: this thread's mass above b0, and b0's elements into this warp's region. Every
      // thread runs the same number of iterations (whole warps at each ballot).
      out.bin = static_cast<uint32_t>(bin);
      const int64_t vecs = (src.end - src.begin) / kVec;
      constexpr int kUnroll = 4;
      uint32_t n_warp = 0;  // the same in every lane
      float above = 0.f;
      uint32_t* keys = cr.key + warp * cr.per_warp;
      uint32_t* pos = cr.pos + warp * cr.per_warp;
      const uint32_t below_me = (1u << lane) - 1u;
      // kFormLaneColumns: this lane's j-th entry at [j * 32 + lane] of the warp's region, up to
      // `cap` of them: no ballots, no warp-wide counter; each lane's stores hit its own bank.
      const bool columns = (form & kFormBits) && (form & kFormLaneColumns);
      const uint32_t cap = static_cast<uint32_t>(cr.per_warp / 32);
      uint32_t n_own = 0;
      uint32_t* col_key = keys + lane;
      uint32_t* col_pos = pos + lane;
      for (int64_t g = 0; g < vecs; g += kUnroll * kThreads) {
        typename Src::Raw r[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int64_t v = g + u * kThreads + threadIdx.x;
          if (v < vecs) r[u] = src.Load(src.begin + v * kVec);
        }
        if (columns) {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int64_t v = g + u * kThreads + threadIdx.x;
            if (v >= vecs) continue;
            uint32_t k[kVec];
            uint32_t unused = 0;
            src.WeightBits(r[u], k, unused);
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
              const uint32_t kb = k[j] >> kCandidateShift;
              if (kb > out.bin) above += __uint_as_float(k[j]);
              if (kb == out.bin) {
                if (n_own < cap) {
                  col_key[n_own * 32] = k[j];
                  col_pos[n_own * 32] = static_cast<uint32_t>(v * kVec + j);
                }
                ++n_own;
              }
            }
          }
        } else if (form & kFormBits) {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int64_t v = g + u * kThreads + threadIdx.x;
            const bool in = v < vecs;
            uint32_t k[kVec];
            uint32_t unused = 0;
            if (in) {
              src.WeightBits(r[u], k, unused);
            } else {
#pragma unroll
              for (int j = 0; j < kVec; ++j) k[j] = 0u;
            }
            // The vector's ballots first, then one branch per vector for the stores: the entries
            // land where the per-element form puts them (element j's after those of j - 1).
            unsigned m[kVec];
            bool mine = false;
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
              const uint32_t kb = k[j] >> kCandidateShift;
              if (in && kb > out.bin) above += __uint_as_float(k[j]);
              const bool c = in && kb == out.bin;
              m[j] = __ballot_sync(0xffffffffu, c);
              mine |= c;
            }
            if (mine) {
              uint32_t at = n_warp;
#pragma unroll
              for (int j = 0; j < kVec; ++j) {
                if ((m[j] >> lane) & 1u) {
                  const uint32_t i = at + __popc(m[j] & below_me);
                  if (i < static_cast<uint32_t>(cr.per_warp)) {
                    keys[i] = k[j];
                    pos[i] = static_cast<uint32_t>(v * kVec + j);
                  }
                }
                at += __popc(m[j]);
              }
            }
#pragma unroll
            for (int j = 0; j < kVec; ++j) n_warp += __popc(m[j]);
          }
        } else {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int64_t v = g + u * kThreads + threadIdx.x;
            const bool in = v < vecs;
            float w[kVec];
            bool unused = false;
            if (in) {
              src.Weights(r[u], w, unused);
            } else {
#pragma unroll
              for (int j = 0; j < kVec; ++j) w[j] = 0.f;
            }
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
              const uint32_t kb = CandidateKey(w[j]) >> kCandidateShift;
              if (in && kb > out.bin) above += w[j];
              const bool c = in && kb == out.bin;
              const unsigned m = __ballot_sync(0xffffffffu, c);
              if (c) {
                const uint32_t at = n_warp + __popc(m & below_me);
                if (at < static_cast<uint32_t>(cr.per_warp)) {
                  keys[at] = CandidateKey(w[j]);
                  pos[at] = static_cast<uint32_t>(v * kVec + j);
                }
              }
              n_warp += __popc(m);
            }
          }
        }
      }
      Stamp<V>(stamps, kStampPass2);
      out.above = above;
      out.cand_end = columns ? static_cast<int>(min(n_own, cap)) * 32
                             : min(static_cast<int>(n_warp), cr.per_warp);
      // This thread's share of b0's size: the warp's count on lane 0, or its own.
      const uint32_t n_mine = columns ? n_own : (lane == 0 ? n_warp : 0u);
      // The block reductions' barriers also publish the regions and counts.
      const bool overflow = columns ? n_own > cap : n_warp > static_cast<uint32_t>(cr.per_warp);
      if (exchange) {
        // One exchange: each block publishes its b0 size, flags and mass above b0 (thread 0)
        // and each thread its candidates' bound; after one cluster barrier every block reads
        // every header (lane j: block j's). Sums: b0's size in bits 0..31, overflowing threads
        // in 32..47, threads that saw a bad number from bit 48.
        const bool bad_here = bad || (bad_bits & 0x7FFFFFFFu) != 0;
        const long long packed = BlockReduce<kThreads>(
            static_cast<long long>(n_mine) | (static_cast<long long>(overflow ? 1 : 0) << 32) |
                (static_cast<long long>(bad_here ? 1 : 0) << 48),
            s, OpAdd());
        const double above_block = BlockReduce<kThreads>(static_cast<double>(above), s, OpAdd());
        if (threadIdx.x == 0) {
          xs.hdr->above = above_block;
          xs.hdr->count = static_cast<uint32_t>(packed & 0xFFFFFFFFll);
          xs.hdr->flags =
              (((packed >> 32) & 0xFFFF) != 0 ? 1u : 0u) | ((packed >> 48) != 0 ? 2u : 0u);
        }
        xs.ends[threadIdx.x] = static_cast<uint32_t>(out.cand_end);
        // kFormDigit3Push: digit 3's count words zeroed before any block can push into them
        // (after this barrier); digit 0's scan has read its spare words among them (the block
        // reductions above are barriers). kFormPushZeroLean: only the 64 spare words (digit 0's
        // clear left the other 960 at 0, and only its scan wrote into them since).
        if constexpr (PushZeroLeanForm<V>()) {
          static_assert(kThreads >= 64 && kDigit3PushWords + 1024 == kRadixBins, "push words");
          if (threadIdx.x < 64) h.count[kRadixBins - 64 + threadIdx.x] = 0;
        } else if constexpr (kPush) {
          for (int b = threadIdx.x; b < 1024; b += kThreads) h.count[kDigit3PushWords + b] = 0;
        }
        if constexpr (OwnerEarlyForm<V>()) {
          // kFormOwnerEarly: the row's uniform drawn while the other blocks arrive.
          ClusterArriveRelease();
          if (threadIdx.x == 0) {
            const uint64_t seed = xs.seed_ptr ? *xs.seed_ptr : xs.seed;
            const uint64_t offset = xs.offset_ptr ? *xs.offset_ptr : xs.offset;
            xs.hdr->u = UniformDraw(seed, offset, static_cast<uint64_t>(xs.row), 0);
          }
          ClusterWaitAcquire();
        } else {
          ClusterSync();  // every block's header, bounds and candidates are complete
        }
        uint32_t c = 0, f = 0;
        // kFormEndsWithHeader: the bounds' loads issued beside the header's (one round trip).
        if constexpr (kEndsEarly) ClusterCandidateEnds<kCluster>(xs, xends);
        if (lane < kCluster) {
          const ClusterExchangeHeader* hj = MapaGeneric(xs.hdr, static_cast<uint32_t>(lane));
          c = hj->count;
          f = hj->flags;
          // kFormOwnerEarly: block j's mass above b0, kept here for the draw (warp 0's copy).
          if (OwnerEarlyForm<V>() && warp == 0) xs.hdr->seen_above[lane] = hj->above;
        }
        c = WarpSumU32(c);
        f = __reduce_or_sync(0xffffffffu, f);
        out.ok = (f & 1u) == 0;
        b0_count = c;
        bad_known = true;
        res.bad = (f & 2u) != 0;
      } else if (form & kFormClusterLean) {
        // The row's bad flag travels with the overflow flag (pass 1 has seen every weight): one
        // block sum (1 per overflowing thread, 2^16 per thread that saw a bad number) and one
        // cluster reduction fewer than reducing it after the search.
        const bool bad_here = bad || (bad_bits & 0x7FFFFFFFu) != 0;
        const int both =
            BlockReduce<kThreads>((overflow ? 1 : 0) + (bad_here ? 0x10000 : 0), s, OpAdd());
        double over[3] = {(both & 0xFFFF) != 0 ? 1.0 : 0.0,
                          static_cast<double>(BlockReduce<kThreads>(n_mine, s, OpAdd())),
                          (both >> 16) != 0 ? 1.0 : 0.0};
        ClusterAllReduce<kCluster>(over, 0b101u, cs);  // overflow, b0's size, bad: in the row
        out.ok = over[0] == 0;
        b0_count = over[1];
        bad_known = true;
        res.bad = over[2] != 0;
      } else {
        double over[2] = {static_cast<double>(BlockReduce<kThreads>(overflow ? 1 : 0, s, OpMax())),
                          static_cast<double>(BlockReduce<kThreads>(n_mine, s, OpAdd()))};
        ClusterAllReduce<kCluster>(over, 1u, cs);  // overflow anywhere; b0's size in the row
        out.ok = over[0] == 0;
        b0_count = over[1];
      }
      Stamp<V>(stamps, kStampPass2Sync);
    }
    // A bin of one element is kept whole: the search ends.
    const bool whole = d == 0 ? b0_count == 1 : h.count[bin] == 1;
    const double m_bin = BinMass(h, bin, base | (static_cast<uint32_t>(bin) << shift));
    above_mass += m_above;
    prefix = (prefix << widths[d]) | bin;
    if (exchange && out.ok) {
      // The kept candidates' mass: above this digit's bin, and the bin whole. Candidate masses
      // are integers in units of b0's ulp (below 2^53): every step is exact, and this digit's
      // histogram total is the previous bin's mass.
      res.local = (d > 0 ? res.local - mass_total + m_above : 0.0) + m_bin;
    } else if (kCluster > 1) {
      const double mine = OwnMassAbove(own, q0, q, whole || d == 2);
      res.local += BlockReduce<kThreads>(mine, s, OpAdd());
    }
    res.key = prefix << shift;
    res.mass = above_mass + m_bin;
    if (d > 0) Stamp<V>(stamps, d == 1 ? kStampDigit1 : kStampDigit2);

    if (whole) {
      // kFormOwnerEarly: the uniform and the masses above b0 that thread 0 and warp 0 wrote at
      // the exchange, visible to the block (later digits' barriers do it otherwise).
      if (OwnerEarlyForm<V>() && d == 0 && exchange) __syncthreads();
      break;
    }
  }
  if (!bad_known) {  // every block of the cluster takes the same branch (merged decisions)
    bad |= (bad_bits & 0x7FFFFFFFu) != 0;
    double flags[1] = {
        static_cast<double>(BlockReduce<kThreads>(static_cast<int>(bad), s, OpMax()))};
    ClusterAllReduce<kCluster>(flags, 1u, cs);
    res.bad = flags[0] != 0;
  }
  return out;
}

}  // namespace flashjit::sampling
