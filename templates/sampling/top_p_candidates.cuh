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
#pragma once

#include "sampling/pick.cuh"
#include "sampling/radix_select.cuh"
#include "sampling/sampling_params.cuh"

namespace flashjit::sampling {

constexpr int kCandidateShift = 20;  // the first digit: key bits 30..20

// SamplingParams::cand_form: the kForm* bits (sampling_params.cuh).

// Pass 1's lane-private window (kFormLaneWindow): kLaneWindowBins bins (sampling_params.cuh) of
// 16 exponents where a row's bulk lies, one copy per lane: bin w of lane l at [w * 32 + l], so
// a warp's 32 atomics fall into 32 different banks whatever bins its lanes hit (the shared
// histogram's random scatter conflicted: 58 % excess wavefronts on flat rows). It lives in the
// candidate regions' memory, unused until pass 2. Weights outside the window go to the shared
// histogram as before. The sums are the same integers, so the histogram is the same.
struct LaneWindow {
  uint32_t* hi;    // [kLaneWindowBins * 32]
  uint32_t* lo;    // [kLaneWindowBins * 32]
  uint32_t first;  // the window's first bin (key bits 30..20)
};

// red.shared.add.u32 at a shared-memory address: the window and the shared histogram are
// different arrays (dynamic and static shared memory), and a select between two generic
// pointers would not promise the shared-memory atomic.
FLASHJIT_DEVICE void RedSharedAdd(uint32_t addr, uint32_t v) {
  asm volatile("red.shared.add.u32 [%0], %1;" : : "r"(addr), "r"(v) : "memory");
}

// The high half of a weight's significand for a first-digit bin's exact mass, from t = key
// bits >> 12: (t & 0x7FF) | 0x800 for a normal weight, t itself for a subnormal one (t < 0x800).
FLASHJIT_DEVICE uint32_t SignificandHigh(uint32_t t) {
  return (t & 0x7FFu) | (min(t, 0x800u) & 0x800u);
}

// The sum of x over the warp (every lane gets it): redux.sync on sm_80+, a butterfly before.
FLASHJIT_DEVICE uint32_t WarpSumU32(uint32_t x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, x);
#else
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
#endif
}

// The window's first bin: probabilities (mean 1 / vocab) get the 16 exponents from about
// 2^-9 / vocab up to 2^7 / vocab; softmax weights of logits (largest exactly 1) get 2^-15 .. 1.
template <class V>
FLASHJIT_DEVICE uint32_t LaneWindowFirstBin(int64_t vocab) {
  int first_exp;
  if constexpr (V::kInput == 1) {
    first_exp = 127 - 15;
  } else {
    const int log2_ceil = 64 - __clzll(vocab > 1 ? vocab - 1 : 1);
    first_exp = 127 - log2_ceil - 9;
  }
  constexpr int kExps = kLaneWindowBins >> 3;
  first_exp = first_exp < 0 ? 0 : (first_exp > 256 - kExps ? 256 - kExps : first_exp);
  return static_cast<uint32_t>(first_exp) << 3;
}

struct CandidateState {
  long long index;  // the drawn element
};

// Shared-memory regions of the candidates: warp w owns entries [w * per_warp, (w+1) * per_warp).
struct CandidateRegions {
  uint32_t* key;  // the weight's key
  uint32_t* pos;  // the element's position in the slice
  int per_warp;
};

// kFormClusterExchange: what each block publishes after pass 2 (its own shared memory; the
// others read it through distributed shared memory after the exchange's barrier).
struct ClusterExchangeHeader {
  double above;    // the block's mass above b0: its threads' pass-2 sums, block-reduced
  uint32_t count;  // the block's elements in b0
  uint32_t flags;  // 1: a warp region overflowed, 2: a bad number
};
struct ClusterExchange {
  ClusterExchangeHeader* hdr;
  uint32_t* ends;  // [kThreads]: each thread's TopPSelection::cand_end
};

struct TopPSelection {
  SelectResult sel;
  uint32_t bin = 0;  // b0, key bits 30..20
  // Every block's candidates hold all of its b0 elements. With kFormClusterExchange, ok means
  // that the exchange ran: digits 2-3 ran over every block's candidates in every block, and
  // sel.local holds the kept candidates' mass of the row (exact) instead of the block's kept
  // mass; the draw goes by it and the blocks' headers (sample_rows), with no cluster barrier.
  bool ok = false;
  float above = 0;  // this thread's mass of its own elements above b0, in its walk order
  // This thread's entries of its warp's region: i = lane, lane + 32, ... < cand_end (the warp's
  // count, lane-strided; with kFormLaneColumns 32 x the lane's own count: its column).
  int cand_end = 0;
};

FLASHJIT_DEVICE uint32_t CandidateKey(float w) { return __float_as_uint(w) & 0x7FFFFFFFu; }

// Whether the kernel runs the cluster exchange: clusters, with the bit tests and the lean steps.
template <class V>
FLASHJIT_DEVICE bool ClusterExchangeForm(int form) {
  return V::kCluster > 1 && (form & kFormBits) && (form & kFormClusterLean) &&
         (form & kFormClusterExchange);
}

// kFormClusterExchange: this thread's candidate bounds in every block of the cluster (thread
// (w, l) of block r owns entries l, l + 32, ... < ends[r] of warp w's region there).
template <int kCluster>
FLASHJIT_DEVICE void ClusterCandidateEnds(const ClusterExchange& xs, int (&end)[kCluster]) {
#pragma unroll
  for (int r = 0; r < kCluster; ++r)
    end[r] = static_cast<int>(MapaGeneric(xs.ends, static_cast<uint32_t>(r))[threadIdx.x]);
}

// Calls f(r, i, key) for this thread's entries i of warp region `keys_w` (this block's address)
// in every block r of the cluster, in the order (i, r): each round loads one entry of every
// block at once, so the distributed loads of all blocks are in flight together.
template <int kCluster, class F>
FLASHJIT_DEVICE void ForEachClusterCandidate(const uint32_t* keys_w, const int (&end)[kCluster],
                                             F&& f) {
  int top = 0;
#pragma unroll
  for (int r = 0; r < kCluster; ++r) top = max(top, end[r]);
  for (int i = threadIdx.x % 32; i < top; i += 32) {
    uint32_t k[kCluster];
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
      k[r] = i < end[r] ? MapaGeneric(keys_w, static_cast<uint32_t>(r))[i] : 0u;
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
      if (i < end[r]) f(r, i, k[r]);
  }
}

// V::kFastScan (variant field fast_scan, SamplingTuning::candidates 9): one digit's scan and
// decisions with the same floating-point sums as the block scan and reductions of the plain form
// (BlockInclusiveScan, BlockReduce in block.cuh), so the same bin q, total and mass above q, bit
// for bit, with 3 block barriers instead of 6:
//   1. each warp's inclusive scan (shuffles up) and its butterfly sum of the threads' masses;
//      the warp totals and the butterfly sums into the scratch, barrier;
//   2. every warp scans the warp totals as BlockInclusiveScan does (the position's running
//      mass, the histogram's total); each warp's first position that reaches the target (and
//      its lowest nonzero one) into spare words of the histogram, barrier; q = their minimum;
//   3. the mass above q, as BlockReduce sums it: the warps above q's warp contribute their
//      butterfly sums of step 1 (all their bins lie above q), q's warp sums the partial masses
//      of its threads (the old loop), the warps below nothing; barrier, one butterfly.
// Spare words: h.count[kRadixBins - 64 ..]: digit 0 counts nothing, digits 2-3 use 1024 bins.
// kExactPrefix (variant field exact_prefix), at digits 2-3: all bins lie in b0 (one exponent),
// so every bin mass is an integer in units of b0's ulp and every partial sum of them (below
// 2^53 units: at most 2^17 elements of 2^24) is exact in any order. The mass above q is then the
// scan's exclusive prefix at q, which the thread that finds q already holds: it goes into the
// scratch beside its warp's position in step 2, and step 3 (its barrier and butterflies, and
// step 1's butterflies) goes: 2 barriers. The same value as step 3's sum, bit for bit.
// Returns q (-1: nothing counted); target is set at digit 0 (p times the total).
template <int kThreads, bool kExactPrefix = false>
FLASHJIT_DEVICE int TopPScanDigit(RadixHistogram& h, int d, int bins, uint32_t base, int shift,
                                  double above_mass, float p, double& target, double& mass_total,
                                  double& m_above, BlockScratch& s) {
  constexpr int kWarps = kThreads / 32;
  static_assert(kWarps >= 2 && 2 * kWarps <= 32, "TopPScanDigit: 64 to 512 threads");
  static_assert(kRadixBins - 64 >= 1024, "TopPScanDigit: spare histogram words");
  constexpr unsigned kAll = 0xffffffffu;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int per = bins / kThreads > 0 ? bins / kThreads : 1;
  const int q0 = threadIdx.x * per;
  double my_mass = 0;
  for (int i = 0; i < per && q0 + i < bins; ++i) {
    const int b = bins - 1 - (q0 + i);
    my_mass += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
  }
  const bool exact = kExactPrefix && d > 0;
  double x = my_mass, bf = my_mass;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const double y = __shfl_up_sync(kAll, x, o);
    if (lane >= o) x += y;
  }
  if (!exact) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) bf += __shfl_xor_sync(kAll, bf, o);
  }
  // [0, kWarps): the warps' scan totals; [16, 16 + kWarps): butterflies (exact: the prefix at
  // the warp's first position that reaches the target).
  double* slots = s.d;
  if (lane == 31) slots[warp] = x;
  if (!exact && lane == 0) slots[16 + warp] = bf;
  __syncthreads();
  double w = lane < kWarps ? slots[lane] : 0.0;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const double y = __shfl_up_sync(kAll, w, o);
    if (lane >= o) w += y;
  }
  const double before = warp > 0 ? __shfl_sync(kAll, w, warp - 1) : 0.0;
  mass_total = __shfl_sync(kAll, w, kWarps - 1);
  const double mass_incl = x + before;
  if (d == 0) target = static_cast<double>(p) * mass_total;
  double run_m = mass_incl - my_mass;
  int found = 0x7fffffff, lowest = -1;
  double pre_found = 0, pre_lowest = 0;  // kExactPrefix: the running mass before those positions
  for (int i = 0; i < per && q0 + i < bins; ++i) {
    const int b = bins - 1 - (q0 + i);
    if (d == 0 ? (h.sig_hi[b] | h.sig_lo[b]) == 0 : h.count[b] == 0) continue;
    lowest = q0 + i;
    pre_lowest = run_m;
    run_m += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
    if (above_mass + run_m >= target && found == 0x7fffffff) {
      found = q0 + i;
      pre_found = pre_lowest;
    }
  }
  const int found_w = __reduce_min_sync(kAll, found);
  const int lowest_w = __reduce_max_sync(kAll, lowest);
  uint32_t* spare = h.count + kRadixBins - 64;  // [w]: found, [32 + w]: lowest
  // kExactPrefix: the prefix at the warp's lowest nonzero position, as two words at [2 w, 2 w + 1]
  // (digits 2-3 use 1024 of the 2048 bins).
  uint32_t* spare_lowest = h.sig_hi + kRadixBins - 64;
  if (lane == 0) {
    spare[warp] = static_cast<uint32_t>(found_w);
    spare[32 + warp] = static_cast<uint32_t>(lowest_w);
  }
  if (exact) {  // positions are the threads' own: one lane holds each
    if (found != 0x7fffffff && found == found_w) slots[16 + warp] = pre_found;
    if (lowest >= 0 && lowest == lowest_w) {
      spare_lowest[2 * warp] = static_cast<uint32_t>(__double2loint(pre_lowest));
      spare_lowest[2 * warp + 1] = static_cast<uint32_t>(__double2hiint(pre_lowest));
    }
  }
  __syncthreads();
  int q = __reduce_min_sync(kAll, lane < kWarps ? static_cast<int>(spare[lane]) : 0x7fffffff);
  const bool by_lowest = q == 0x7fffffff;
  if (by_lowest)  // rounding: the lowest nonzero bin
    q = __reduce_max_sync(kAll, lane < kWarps ? static_cast<int>(spare[32 + lane]) : -1);
  if (q < 0) return q;
  const int wq = q / per / 32;  // q's warp
  if (exact) {
    m_above = by_lowest ? __hiloint2double(static_cast<int>(spare_lowest[2 * wq + 1]),
                                           static_cast<int>(spare_lowest[2 * wq]))
                        : slots[16 + wq];
    return q;
  }
  if (warp == wq) {
    double part = 0;
    for (int i = 0; i < per && q0 + i < q; ++i) {
      const int b = bins - 1 - (q0 + i);
      part += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) part += __shfl_xor_sync(kAll, part, o);
    if (lane == 0) slots[16 + wq] = part;
  }
  __syncthreads();
  double y = lane <= wq ? slots[16 + lane] : 0.0;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) y += __shfl_xor_sync(kAll, y, o);
  m_above = y;
  return q;
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
  const bool exchange = ClusterExchangeForm<V>(form);
  bool bad = false, bad_known = false;  // bad_known: res.bad reduced with pass 2's flags
  uint32_t bad_bits = 0;                // kFormBits: the invalid weights' bit patterns
  for (int d = 0; d < 3; ++d) {
    const int shift = shifts[d], bins = 1 << widths[d];
    const int hi_shift = shift + widths[d];
    const uint32_t base = d == 0 ? 0u : prefix << hi_shift;
    __syncthreads();  // the previous digit may still read the histogram
    for (int b = threadIdx.x; b < bins; b += kThreads) h.count[b] = h.sig_hi[b] = h.sig_lo[b] = 0;
    const bool windowed = d == 0 && (form & kFormBits) && (form & kFormLaneWindow);
    if (windowed) {
      for (int i = threadIdx.x; i < kLaneWindowBins * 32 / 4; i += kThreads) {
        reinterpret_cast<uint4*>(win.hi)[i] = make_uint4(0u, 0u, 0u, 0u);
        reinterpret_cast<uint4*>(win.lo)[i] = make_uint4(0u, 0u, 0u, 0u);
      }
    }
    __syncthreads();
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
    } else if (exchange && out.ok) {
      // Every block's candidates, where they lie: the same histogram in every block.
      int end[kCluster];
      ClusterCandidateEnds<kCluster>(xs, end);
      ForEachClusterCandidate<kCluster>(cr.key + warp * cr.per_warp, end,
                                        [&](int, int, uint32_t key) {
                                          if ((key >> hi_shift) == prefix) add(key);
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
    if (d == 0) Stamp<V>(stamps, kStampPass1);

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
        ClusterSync();  // every block's header, bounds and candidates are complete
        uint32_t c = 0, f = 0;
        if (lane < kCluster) {
          const ClusterExchangeHeader* hj = MapaGeneric(xs.hdr, static_cast<uint32_t>(lane));
          c = hj->count;
          f = hj->flags;
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

    if (whole) break;
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
