// The two-pass top-p kernel's state (the algorithm: top_p_candidates.cuh): the first digit's
// shift, pass 1's lane-private window, the candidate regions, the cluster exchange's layout, the
// selection a block carries into the draw, and the helpers that walk the candidates.
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
  // kFormOwnerEarly (this block's own copies, read by this block only): every block's mass above
  // b0 (block j's at [j]) and the row's uniform, written after the exchange.
  double seen_above[8];
  float u;
};
struct ClusterExchange {
  ClusterExchangeHeader* hdr;
  uint32_t* ends;  // [kThreads]: each thread's TopPSelection::cand_end
  // kFormOwnerEarly: the row's uniform draw (UniformDraw(seed, offset, row, 0), sample_rows):
  // the seed and offset as SamplingParams holds them, and the row.
  const uint64_t* seed_ptr;
  const uint64_t* offset_ptr;
  uint64_t seed, offset;
  int64_t row;
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

// The kForm* bits the kernel runs: the variant's own (V::kForm, variant field `form`: the forms it
// never takes are compiled out, so that less code is fetched cold per launch) or, with V::kForm
// -1, the launch's SamplingParams::cand_form (every form's code in one kernel).
template <class V>
FLASHJIT_DEVICE int CandidateForm(int runtime_form) {
  if constexpr (V::kForm >= 0)
    return V::kForm;
  else
    return runtime_form;
}

// Whether the kernel runs the cluster exchange: clusters, with the bit tests and the lean steps.
template <class V>
FLASHJIT_DEVICE bool ClusterExchangeForm(int form) {
  return V::kCluster > 1 && (form & kFormBits) && (form & kFormClusterLean) &&
         (form & kFormClusterExchange);
}

// kFormDigit3Push: the variant pushes digit 3's counts (compiled-in forms with the exchange and
// the integer digit scans only; the spare words are those the other scans leave alone).
template <class V>
FLASHJIT_DEVICE constexpr bool Digit3PushForm() {
  return V::kForm >= 0 && (V::kForm & kFormDigit3Push) != 0 && V::kCluster > 1 &&
         (V::kForm & kFormBits) != 0 && (V::kForm & kFormClusterLean) != 0 &&
         (V::kForm & kFormClusterExchange) != 0 && V::kFastScan && V::kExactPrefix &&
         V::kWarpScan && V::kThreads >= 64 && V::kThreads <= 512;
}

// kFormDigit3Push: digit 3's pushed counts live in h.count[kDigit3PushWords + b] (b < 1024): the
// second half of the count words, which digit 0 does not count into (its scan's spare words,
// the last 64, are read before pass 2 ends) and digits 2-3 (1024 bins) do not reach.
constexpr int kDigit3PushWords = kRadixBins / 2;
static_assert(kRadixBins >= 2048, "kFormDigit3Push: digit 3's 1024 bins above the first 1024");

// The round-2 levers of kFormDigit3Push (sampling_params.cuh): compiled-in bits of a push form.
template <class V>
FLASHJIT_DEVICE constexpr bool PushZeroLeanForm() {
  return Digit3PushForm<V>() && (V::kForm & kFormPushZeroLean) != 0;
}
template <class V>
FLASHJIT_DEVICE constexpr bool EndsWithHeaderForm() {
  return Digit3PushForm<V>() && (V::kForm & kFormEndsWithHeader) != 0;
}
// Session 11's levers of kFormDigit3Push (sampling_params.cuh): the last cluster barrier
// relaxed, the owner's inputs read early.
template <class V>
FLASHJIT_DEVICE constexpr bool EndRelaxedForm() {
  return Digit3PushForm<V>() && (V::kForm & kFormEndRelaxed) != 0;
}
template <class V>
FLASHJIT_DEVICE constexpr bool OwnerEarlyForm() {
  return Digit3PushForm<V>() && (V::kForm & kFormOwnerEarly) != 0 && V::kCluster <= 8;
}

template <class V>
FLASHJIT_DEVICE constexpr int ClusterKeyRounds() {
  return Digit3PushForm<V>() && (V::kForm & kFormKeys2Rounds) != 0 && V::kCluster <= 4 ? 2 : 1;
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
// block at once, so the distributed loads of all blocks are in flight together; kRounds 2
// (kFormKeys2Rounds) loads two rounds (i and i + 32) before either is used.
template <int kCluster, int kRounds = 1, class F>
FLASHJIT_DEVICE void ForEachClusterCandidate(const uint32_t* keys_w, const int (&end)[kCluster],
                                             F&& f) {
  int top = 0;
#pragma unroll
  for (int r = 0; r < kCluster; ++r) top = max(top, end[r]);
  for (int i0 = threadIdx.x % 32; i0 < top; i0 += 32 * kRounds) {
    uint32_t k[kRounds][kCluster];
#pragma unroll
    for (int u = 0; u < kRounds; ++u)
#pragma unroll
      for (int r = 0; r < kCluster; ++r) {
        const int i = i0 + 32 * u;
        k[u][r] = i < end[r] ? MapaGeneric(keys_w, static_cast<uint32_t>(r))[i] : 0u;
      }
#pragma unroll
    for (int u = 0; u < kRounds; ++u)
#pragma unroll
      for (int r = 0; r < kCluster; ++r)
        if (i0 + 32 * u < end[r]) f(r, i0 + 32 * u, k[u][r]);
  }
}

}  // namespace flashjit::sampling
