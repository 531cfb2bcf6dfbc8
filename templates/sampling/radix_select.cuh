// Threshold search without sorting: a most-significant-digit radix select over 32-bit keys in
// three passes (digits of 11, 11 and 10 bits), each a histogram in shared memory.
//
// Count mode (top-k): the largest key T with count(key >= T) >= k.
// Mass mode (top-p):  the largest key T with mass(key >= T) >= p * mass(all counted).
// The filter keeps every element with key >= T, so ties at the boundary are all kept.
//
// Masses are exact: inside one first-digit bin every weight has the same exponent, so a bin's
// mass is an integer sum of 24-bit significands times one power of two. The sum is kept as two
// 32-bit halves (high and low 12 bits of each significand; exact up to 2^20 elements per bin):
// native 32-bit shared atomics, where a 64-bit one is a compare-and-swap loop that serialises
// under the contention of flat rows (measured: 10x slower per pass). Integer atomics make the
// histogram, and so the threshold, deterministic.
//
// A pass ends the search early when the selected bin is kept whole (its elements are all >= T),
// e.g. a single element: peaked rows usually stop after one pass.
//
// Clusters (V::kCluster > 1 blocks per row, each over its slice): after each pass, block r sums
// its share of the bins over every block's histogram (distributed shared memory) and writes the
// sums back into every block, so all blocks see the same merged histogram, take the same
// decisions and run the same number of cluster barriers.
#pragma once

#include "sampling/block.cuh"
#include "sampling/row_source.cuh"

namespace flashjit::sampling {

constexpr int kRadixBins = 2048;

struct RadixHistogram {
  uint32_t count[kRadixBins];
  uint32_t sig_hi[kRadixBins];  // sum of significand >> 12 (mass mode)
  uint32_t sig_lo[kRadixBins];  // sum of significand & 0xFFF
  int selected;                 // bin chosen by the last pass (position from the top)
  int early;                    // 1 when the chosen bin is kept whole
};

struct SelectResult {
  uint32_t key = 0;    // keep key >= key
  double mass = 0;     // mass of the kept elements (weights only)
  uint32_t count = 0;  // number of kept elements
  double total = 0;    // mass of every counted element (first pass)
  bool bad = false;    // a bad number was seen (first pass)
  double local = 0;    // mass of the kept elements of this block's slice (clusters)
};

FLASHJIT_DEVICE uint32_t SignificandOfKey(uint32_t key) {
  const uint32_t exp = (key >> 23) & 0xFF;
  return (key & 0x7FFFFFu) | (exp ? 0x800000u : 0u);
}

// Mass of bin `b` of `h`, whose keys share the exponent bits of `key`.
// 2^(exp - 150) is a normal double for every float exponent, so the product is exact: the same
// value ldexp gives, without its range handling.
FLASHJIT_DEVICE double BinMass(const RadixHistogram& h, int b, uint32_t key) {
  const int exp = static_cast<int>((key >> 23) & 0xFF);
  const double sig = static_cast<double>(h.sig_hi[b]) * 4096.0 + static_cast<double>(h.sig_lo[b]);
  const long long scale_bits = static_cast<long long>((exp ? exp : 1) - 150 + 1023) << 52;
  return sig * __longlong_as_double(scale_bits);
}

// Clusters: the masses of the bins at positions q0 .. q0 + per - 1 (counted from the top) of
// this block's own histogram, read before the merge overwrites them; 0 past `per` or `bins`.
template <int kMaxPer>
FLASHJIT_DEVICE void OwnBinMasses(const RadixHistogram& h, int bins, int q0, int per, uint32_t base,
                                  int shift, double (&own)[kMaxPer]) {
#pragma unroll
  for (int i = 0; i < kMaxPer; ++i) {
    const int b = bins - 1 - (q0 + i);
    own[i] =
        i < per && q0 + i < bins ? BinMass(h, b, base | (static_cast<uint32_t>(b) << shift)) : 0.0;
  }
}

// Clusters: this thread's share of its block's own mass strictly above scan position q (counted
// from the top), and at q too when the search ends there (`last`). `own` holds the masses of
// positions q0 .. q0 + kMaxPer - 1 (0 where a position is not the thread's).
template <int kMaxPer>
FLASHJIT_DEVICE double OwnMassAbove(const double (&own)[kMaxPer], int q0, int q, bool last) {
  double mine = 0;
#pragma unroll
  for (int i = 0; i < kMaxPer; ++i)
    if (q0 + i < q || (last && q0 + i == q)) mine += own[i];
  return mine;
}

// Keys of weights read through `src`, or keys the source defines itself.
template <class V, class Src>
FLASHJIT_DEVICE void KeysOf(const Src& src, const typename Src::Raw& r, uint32_t (&k)[V::kVec],
                            bool& bad) {
  if constexpr (V::kKeysAreLogits) {
    src.Keys(r, k, bad);
  } else {
    float w[V::kVec];
    src.Weights(r, w, bad);
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) k[j] = KeyOfWeight(w[j]);
  }
}

// kByMass: the mass mode with target fraction `p` of the mass of keys >= `floor_key`;
// otherwise the count mode with `k`. kWithMass: also accumulate masses (weights only).
template <class V, bool kByMass, bool kWithMass, class Src>
FLASHJIT_DEVICE SelectResult RadixSelect(const SliceView<V, Src>& src, uint32_t k, float p,
                                         uint32_t floor_key, RadixHistogram& h, BlockScratch& s,
                                         ClusterSlots& cs) {
  constexpr int kThreads = V::kThreads, kCluster = V::kCluster;
  static_assert(kCluster == 1 || kThreads >= 256, "cluster variants need >= 256 threads");
  const int shifts[3] = {21, 10, 0};
  const int widths[3] = {11, 11, 10};
  SelectResult res;
  uint32_t prefix = 0;  // key bits fixed so far
  uint32_t above_count = 0;
  double above_mass = 0, target = 0;
  bool bad = false;
  for (int d = 0; d < 3; ++d) {
    const int shift = shifts[d], bins = 1 << widths[d];
    const int hi_shift = shift + widths[d];
    const uint32_t base = d == 0 ? 0u : prefix << hi_shift;  // key bits above this digit
    __syncthreads();  // the previous pass may still read the histogram
    for (int b = threadIdx.x; b < bins; b += kThreads) {
      h.count[b] = 0;
      if constexpr (kWithMass) h.sig_hi[b] = h.sig_lo[b] = 0;
    }
    __syncthreads();
    ForEachVec(src, [&](int64_t, const typename Src::Raw& r) {
      uint32_t keys[V::kVec];
      KeysOf<V>(src, r, keys, bad);
#pragma unroll
      for (int j = 0; j < V::kVec; ++j) {
        const uint32_t key = keys[j];
        if (key < floor_key) continue;
        if (d > 0 && (key >> hi_shift) != prefix) continue;
        const int b = (key >> shift) & (bins - 1);
        atomicAdd(&h.count[b], 1u);
        if constexpr (kWithMass) {
          const uint32_t sig = SignificandOfKey(key);
          atomicAdd(&h.sig_hi[b], sig >> 12);
          atomicAdd(&h.sig_lo[b], sig & 0xFFFu);
        }
      }
    });
    __syncthreads();

    // Each thread owns `per` consecutive bins counted from the top (position q = bins-1-bin).
    const int per = bins / kThreads > 0 ? bins / kThreads : 1;
    const int q0 = threadIdx.x * per;
    // Clusters: the masses of this block's own bins (before the merge overwrites them), so that
    // the block knows its share of the kept mass without another pass over its slice.
    constexpr int kMaxPer = kRadixBins / kThreads > 0 ? kRadixBins / kThreads : 1;
    double own[kCluster > 1 && kWithMass ? kMaxPer : 1];
    if constexpr (kCluster > 1 && kWithMass) OwnBinMasses(h, bins, q0, per, base, shift, own);
    if constexpr (kCluster > 1) {
      ClusterSync();  // every block's histogram is complete
      const int part = bins / kCluster;
      const int first = static_cast<int>(ClusterCtaRank()) * part;
      for (int b = first + threadIdx.x; b < first + part; b += kThreads) {
        uint32_t c = 0, hi = 0, lo = 0;
#pragma unroll 2
        for (int r = 0; r < kCluster; ++r) {
          c += LdSharedClusterU32(MapaSharedCluster(&h.count[b], r));
          if constexpr (kWithMass) {
            hi += LdSharedClusterU32(MapaSharedCluster(&h.sig_hi[b], r));
            lo += LdSharedClusterU32(MapaSharedCluster(&h.sig_lo[b], r));
          }
        }
#pragma unroll 2
        for (int r = 0; r < kCluster; ++r) {
          StSharedClusterU32(MapaSharedCluster(&h.count[b], r), c);
          if constexpr (kWithMass) {
            StSharedClusterU32(MapaSharedCluster(&h.sig_hi[b], r), hi);
            StSharedClusterU32(MapaSharedCluster(&h.sig_lo[b], r), lo);
          }
        }
      }
      ClusterSync();  // every block holds the merged histogram
    }

    uint32_t my_count = 0;
    double my_mass = 0;
    for (int i = 0; i < per && q0 + i < bins; ++i) {
      const int b = bins - 1 - (q0 + i);
      my_count += h.count[b];
      if constexpr (kWithMass) my_mass += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
    }
    uint32_t count_total;
    double mass_total = 0;
    const uint32_t count_incl = BlockInclusiveScan<kThreads>(my_count, s, &count_total);
    double mass_incl = 0;
    if constexpr (kWithMass) mass_incl = BlockInclusiveScan<kThreads>(my_mass, s, &mass_total);
    if (d == 0) {
      res.total = mass_total;
      target = static_cast<double>(p) * mass_total;
    }
    // The first position (from the top) where the running count / mass reaches the target.
    uint32_t run_c = count_incl - my_count;
    double run_m = mass_incl - my_mass;
    int found = 0x7fffffff, lowest = -1;
    for (int i = 0; i < per && q0 + i < bins; ++i) {
      const int b = bins - 1 - (q0 + i);
      const uint32_t c = h.count[b];
      if (c == 0) continue;
      lowest = q0 + i;
      run_c += c;
      if constexpr (kWithMass) run_m += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
      const bool reached = kByMass ? above_mass + run_m >= target : above_count + run_c >= k;
      if (reached && found == 0x7fffffff) found = q0 + i;
    }
    int q = BlockReduce<kThreads>(found, s, OpMin());
    if (q == 0x7fffffff) q = BlockReduce<kThreads>(lowest, s, OpMax());  // rounding: lowest bin
    if (q < 0) break;  // nothing counted: keep everything (key 0)
    // Count and mass strictly above the chosen bin.
    uint32_t c_above = 0;
    double m_above = 0;
    for (int i = 0; i < per && q0 + i < q; ++i) {
      const int b = bins - 1 - (q0 + i);
      c_above += h.count[b];
      if constexpr (kWithMass) m_above += BinMass(h, b, base | (static_cast<uint32_t>(b) << shift));
    }
    c_above = BlockReduce<kThreads>(c_above, s, OpAdd());
    if constexpr (kWithMass) m_above = BlockReduce<kThreads>(m_above, s, OpAdd());
    const int bin = bins - 1 - q;
    const uint32_t c_bin = h.count[bin];
    double m_bin = 0;
    if constexpr (kWithMass) m_bin = BinMass(h, bin, base | (static_cast<uint32_t>(bin) << shift));
    above_count += c_above;
    above_mass += m_above;
    prefix = (prefix << widths[d]) | bin;
    const bool whole = c_bin == 1 || (!kByMass && above_count + c_bin == k);
    if constexpr (kCluster > 1 && kWithMass) {
      // This block's mass strictly above the chosen bin, and in it when the search ends here.
      const double mine = OwnMassAbove(own, q0, q, whole || d == 2);
      res.local += BlockReduce<kThreads>(mine, s, OpAdd());
    }
    res.key = prefix << shift;
    res.count = above_count + c_bin;
    res.mass = above_mass + m_bin;
    if (whole) break;
  }
  double flags[1] = {static_cast<double>(BlockReduce<kThreads>(static_cast<int>(bad), s, OpMax()))};
  ClusterAllReduce<kCluster>(flags, 1u, cs);
  res.bad = flags[0] != 0;
  return res;
}

}  // namespace flashjit::sampling
