// One radix digit's scan and decisions in the two-pass top-p kernel (top_p_candidates.cuh).
#pragma once

#include "sampling/top_p_state.cuh"

namespace flashjit::sampling {

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

// V::kWarpScan (variant field warp_scan, SamplingTuning::candidates 10), digits 2-3 only (all
// bins in b0, one exponent): the same q, histogram total and mass above q as kExactPrefix, from
// integer sums with 1 block barrier instead of 2. A bin's mass is S * ulp with S = sig_hi * 4096 +
// sig_lo; the halves' sums over any bins fit 32 bits (at most 2^17 candidates of 12-bit halves),
// so every partial sum is an exact integer and its double (below 2^53) times the power-of-two ulp
// is the value the double scan holds, bit for bit: the same comparisons, the same q.
//   1. each thread sums its positions' halves; each warp's sums (redux.sync) into spare words of
//      the histogram (bins 1024.. are unused at digits 2-3); barrier;
//   2. every warp scans the warps' sums (integer shuffles) and finds the first warp whose
//      running mass reaches the target (the running mass only grows: a ballot);
//   3. every warp scans that warp's threads' sums, and each of those threads walks its positions:
//      the first position that reaches the target. It holds mass (the running mass at the
//      digit's start is below the target, see the caller), so it is counted: the same q as the
//      scan that skips empty bins. None reaches it (rounding): the lowest counted position, read
//      by every warp (rare), with the mass above it = the total less its own (nothing below).
// Nothing of BlockScratch is used: the caller's reductions right after it cannot race with it.
template <int kThreads>
FLASHJIT_DEVICE int TopPScanDigitWarp(RadixHistogram& h, int bins, uint32_t base, double above_mass,
                                      double target, double& mass_total, double& m_above) {
  constexpr int kWarps = kThreads / 32;
  static_assert(kWarps >= 2 && kWarps <= 32, "TopPScanDigitWarp: 64 to 1024 threads");
  static_assert(kRadixBins - 64 >= 1024, "TopPScanDigitWarp: spare histogram words");
  constexpr unsigned kAll = 0xffffffffu;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int per = bins / kThreads > 0 ? bins / kThreads : 1;
  uint32_t* spare_hi = h.sig_hi + kRadixBins - 64;
  uint32_t* spare_lo = h.sig_lo + kRadixBins - 64;
  {
    const int q0 = threadIdx.x * per;
    uint32_t hi = 0, lo = 0;
    for (int i = 0; i < per && q0 + i < bins; ++i) {
      const int b = bins - 1 - (q0 + i);
      hi += h.sig_hi[b];
      lo += h.sig_lo[b];
    }
    hi = __reduce_add_sync(kAll, hi);
    lo = __reduce_add_sync(kAll, lo);
    if (lane == 0) {
      spare_hi[warp] = hi;
      spare_lo[warp] = lo;
    }
  }
  __syncthreads();
  const int exp = static_cast<int>((base >> 23) & 0xFF);  // every bin's (BinMass)
  const double ulp =
      __longlong_as_double(static_cast<long long>((exp ? exp : 1) - 150 + 1023) << 52);
  auto mass_of = [](uint32_t hi, uint32_t lo) {
    return static_cast<unsigned long long>(hi) * 4096ull + lo;
  };
  // 2. The warps' running sums.
  uint32_t wh = lane < kWarps ? spare_hi[lane] : 0u, wl = lane < kWarps ? spare_lo[lane] : 0u;
  const uint32_t own_wh = wh, own_wl = wl;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t yh = __shfl_up_sync(kAll, wh, o), yl = __shfl_up_sync(kAll, wl, o);
    if (lane >= o) {
      wh += yh;
      wl += yl;
    }
  }
  const unsigned long long total =
      mass_of(__shfl_sync(kAll, wh, kWarps - 1), __shfl_sync(kAll, wl, kWarps - 1));
  mass_total = static_cast<double>(total) * ulp;
  const bool reach =
      lane < kWarps && above_mass + static_cast<double>(mass_of(wh, wl)) * ulp >= target;
  const unsigned ballot = __ballot_sync(kAll, reach);
  if (ballot == 0) {  // rounding: the lowest counted position, the mass above it
    int lowest = -1;
    for (int q = lane; q < bins; q += 32)
      if (h.count[bins - 1 - q] != 0) lowest = q;
    lowest = __reduce_max_sync(kAll, lowest);
    if (lowest >= 0) {
      const int b = bins - 1 - lowest;
      m_above = static_cast<double>(total - mass_of(h.sig_hi[b], h.sig_lo[b])) * ulp;
    }
    return lowest;
  }
  const int wq = __ffs(ballot) - 1;
  // The sums of the warps before wq.
  const uint32_t before_h = __shfl_sync(kAll, wh - own_wh, wq);
  const uint32_t before_l = __shfl_sync(kAll, wl - own_wl, wq);
  // 3. Warp wq's threads: lane l takes thread wq * 32 + l's positions.
  const int q0 = (wq * 32 + lane) * per;
  uint32_t th = 0, tl = 0;
  for (int i = 0; i < per && q0 + i < bins; ++i) {
    const int b = bins - 1 - (q0 + i);
    th += h.sig_hi[b];
    tl += h.sig_lo[b];
  }
  uint32_t ih = th, il = tl;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t yh = __shfl_up_sync(kAll, ih, o), yl = __shfl_up_sync(kAll, il, o);
    if (lane >= o) {
      ih += yh;
      il += yl;
    }
  }
  unsigned long long run = mass_of(before_h + ih - th, before_l + il - tl);
  int found = 0x7fffffff;
  unsigned long long pre = 0;
  for (int i = 0; i < per && q0 + i < bins; ++i) {
    const int b = bins - 1 - (q0 + i);
    const unsigned long long next = run + mass_of(h.sig_hi[b], h.sig_lo[b]);
    if (above_mass + static_cast<double>(next) * ulp >= target) {
      found = q0 + i;
      pre = run;
      break;
    }
    run = next;
  }
  const int q = __reduce_min_sync(kAll, found);
  const int at = (q / per) % 32;  // the lane that found q
  m_above = static_cast<double>(__shfl_sync(kAll, pre, at)) * ulp;
  return q;
}

}  // namespace flashjit::sampling
