// The sampling kernel: one block per output row.
//
//   weights ─► filter (threshold key T) ─► sample (inverse CDF) | renormalise | mask
//
// Variant: DType (input element), kInput (0 probs, 1 logits), kFilter (FilterKind), kOutput
// (OutputKind), kThreads, kVec (elements per access), kKeysAreLogits (filter on logit keys),
// kCandidates (top-p sampling in two passes over the slice: top_p_candidates.cuh), kStamps (phase
// stamps into SamplingParams::stamps, benchmarks only), kForm (the two-pass kernel's kForm* bits
// compiled in, -1: SamplingParams::cand_form at run time).
#pragma once

#include "common/float_consts.cuh"
#include "sampling/philox.cuh"
#include "sampling/pick.cuh"
#include "sampling/radix_select.cuh"
#include "sampling/sampling_params.cuh"
#include "sampling/top_p_candidates.cuh"

namespace flashjit::sampling {

enum FilterKind : int { kNone = 0, kTopK = 1, kTopP = 2, kMinP = 3, kJoint = 4, kTopKFirst = 5 };
enum OutputKind : int { kSample = 0, kProbs = 1, kMaskLogits = 2 };

struct RowStats {
  float max;
  double total;  // over the whole row (every block of the cluster)
  double local;  // over this block's slice
  bool bad;
};

// One pass: the largest weight, the mass of weights with key >= floor_key, any bad number.
template <class V, class Src>
FLASHJIT_DEVICE RowStats StatsPass(const SliceView<V, Src>& src, uint32_t floor_key,
                                   BlockScratch& s, ClusterSlots& cs) {
  float mx = 0.f, sum = 0.f;
  bool bad = false;
  ForEachVec(src, [&](int64_t, const typename Src::Raw& r) {
    float w[V::kVec];
    src.Weights(r, w, bad);
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      mx = fmaxf(mx, w[j]);
      if (KeyOfWeight(w[j]) >= floor_key) sum += w[j];
    }
  });
  RowStats st;
  double x[3] = {static_cast<double>(BlockReduce<V::kThreads>(mx, s, OpMax())),
                 BlockReduce<V::kThreads>(static_cast<double>(sum), s, OpAdd()),
                 static_cast<double>(BlockReduce<V::kThreads>(static_cast<int>(bad), s, OpMax()))};
  st.local = x[1];
  ClusterAllReduce<V::kCluster>(x, 0b101u, cs);
  st.max = static_cast<float>(x[0]);
  st.total = x[1];
  st.bad = x[2] != 0;
  return st;
}

// Largest logit that is not NaN or +inf (-inf when none), and whether a NaN/+inf was seen.
template <class V>
FLASHJIT_DEVICE float LogitMax(const SliceView<V, LogitKeyRow<V>>& src, bool* bad_out,
                               BlockScratch& s, ClusterSlots& cs) {
  float mx = NegInf();
  bool bad = false;
  ForEachVec(src, [&](int64_t, const typename LogitKeyRow<V>::Raw& r) {
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      const float x = ToFloat(r.v[j]);
      const bool ok = x <= kFloatMax;
      bad |= !ok;
      if (ok) mx = fmaxf(mx, x);
    }
  });
  double x[2] = {static_cast<double>(BlockReduce<V::kThreads>(mx, s, OpMax())),
                 static_cast<double>(BlockReduce<V::kThreads>(static_cast<int>(bad), s, OpMax()))};
  ClusterAllReduce<V::kCluster>(x, 0b11u, cs);
  *bad_out = x[1] != 0;
  return static_cast<float>(x[0]);
}

// The kept set of one row of weights: threshold key and kept mass.
template <class V, class Src>
FLASHJIT_DEVICE SelectResult FilterRow(const SliceView<V, Src>& src, int k, float p, float min_p,
                                       RadixHistogram& h, BlockScratch& s, ClusterSlots& cs) {
  constexpr int kFilter = V::kFilter;
  SelectResult sel;
  if constexpr (kFilter == kNone || kFilter == kMinP) {
    RowStats st = StatsPass<V>(src, 0u, s, cs);
    sel.bad = st.bad;
    sel.total = sel.mass = st.total;
    sel.local = st.local;
    if constexpr (kFilter == kMinP) {
      sel.key = KeyOfWeight(st.max * min_p);
      if (sel.key > KeyOfWeight(st.max)) sel.key = KeyOfWeight(st.max);  // rounding, p = 1
      const RowStats kept = StatsPass<V>(src, sel.key, s, cs);
      sel.mass = kept.total;
      sel.local = kept.local;
    }
  } else if constexpr (kFilter == kTopK) {
    sel = RadixSelect<V, false, true>(src, k, 1.f, 0u, h, s, cs);
  } else if constexpr (kFilter == kTopP) {
    sel = RadixSelect<V, true, true>(src, 0u, p, 0u, h, s, cs);
  } else {
    SelectResult by_k = RadixSelect<V, false, true>(src, k, 1.f, 0u, h, s, cs);
    // Joint: top-p over the whole row. Top-k first: top-p over what top-k kept.
    SelectResult by_p =
        RadixSelect<V, true, true>(src, 0u, p, kFilter == kJoint ? 0u : by_k.key, h, s, cs);
    sel = by_p.key >= by_k.key ? by_p : by_k;
    sel.bad = by_k.bad;
    sel.total = by_k.total;
  }
  return sel;
}

template <class V>
__device__ void sample_rows(const SamplingParams& p) {
  using T = typename V::DType;
  using Raw = Vec<T, V::kVec>;
  constexpr int kCluster = V::kCluster;
  __shared__ RadixHistogram hist;
  __shared__ BlockScratch scratch;
  __shared__ PickScratch pick_scratch;
  __shared__ ClusterSlots slots;
  extern __shared__ __align__(16) unsigned char sampling_cache[];
  static_assert(
      !V::kCandidates || (V::kFilter == kTopP && V::kOutput == kSample && !V::kKeysAreLogits),
      "candidates: top-p sampling only");
  // kCandidates: the candidate regions follow the slice cache in dynamic shared memory.
  __shared__ CandidateState cand_state;
  const int64_t cache_bytes = (static_cast<int64_t>(p.cache_vecs) * sizeof(Raw) + 15) / 16 * 16;
  const CandidateRegions regions{reinterpret_cast<uint32_t*>(sampling_cache + cache_bytes),
                                 reinterpret_cast<uint32_t*>(sampling_cache + cache_bytes) +
                                     static_cast<int64_t>(V::kThreads / 32) * p.cand_per_warp,
                                 p.cand_per_warp};
  // kFormClusterExchange: what each block of a cluster publishes after pass 2.
  constexpr bool kExchangeable = V::kCandidates && kCluster > 1;
  __shared__ ClusterExchangeHeader exchange_header;
  __shared__ uint32_t exchange_ends[kExchangeable ? V::kThreads : 1];
  const ClusterExchange exchange{&exchange_header,
                                 exchange_ends,
                                 p.seed_ptr,
                                 p.offset_ptr,
                                 p.seed,
                                 p.offset,
                                 static_cast<int64_t>(blockIdx.x / kCluster)};
  // The form's bits: compile-time constants with V::kForm (variant field `form`), else read from
  // the params at each use (as before the field: the same code).
  const bool exchange_form = kExchangeable && ClusterExchangeForm<V>(CandidateForm<V>(p.cand_form));
  StampTimer<V>(p.stamps, kStampTimerStart);
  // Pass 1's lane-private window: the regions' memory (at least kLaneWindowBytes).
  const LaneWindow window{regions.key, regions.key + kLaneWindowBins * 32,  // TopPSelect: kWinLo
                          LaneWindowFirstBin<V>(p.vocab)};
  TopPSelection top_p_sel;
  // kCluster blocks per row (a cluster); block `rank` owns elements [begin, end).
  const int rank = kCluster > 1 ? static_cast<int>(ClusterCtaRank()) : 0;
  const int64_t row = blockIdx.x / kCluster, n = p.vocab;
  int64_t in_row = row;
  if (p.indices) {
    in_row = p.index_bytes == 8 ? static_cast<const int64_t*>(p.indices)[row]
                                : static_cast<const int32_t*>(p.indices)[row];
  }
  const bool index_ok = in_row >= 0 && in_row < p.rows_in;
  const T* in = static_cast<const T*>(p.input) + (index_ok ? in_row : 0) * p.in_stride;
  const int64_t chunk = kCluster > 1 ? p.chunk : n;
  const int64_t begin = rank * chunk < n ? rank * chunk : n;
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  bool filling = true;
  // The slice as the filters see it: empty when the index is out of range.
  const SliceView<V, LogitKeyRow<V>> keys{
      LogitKeyRow<V>{in}, begin,   index_ok ? end : begin, reinterpret_cast<Raw*>(sampling_cache),
      p.cache_vecs,       &filling};

  // Per-row knobs, clamped into their domains (device values cannot be checked on the host).
  int k = p.top_k_arr ? p.top_k_arr[row] : p.top_k;
  k = k < 1 ? 1 : (k > n ? static_cast<int>(n) : k);
  float top_p = p.top_p_arr ? p.top_p_arr[row] : p.top_p;
  top_p = top_p > 0.f ? (top_p < 1.f ? top_p : 1.f) : 1e-30f;  // NaN -> tiny
  float min_p = p.min_p_arr ? p.min_p_arr[row] : p.min_p;
  min_p = min_p >= 0.f ? (min_p < 1.f ? min_p : 1.f) : 0.f;
  float temperature = p.temperature_arr ? p.temperature_arr[row] : p.temperature;
  temperature = temperature > 1e-6f ? temperature : 1e-6f;

  Stamp<V>(p.stamps, kStampStart);
  SelectResult sel;
  bool bad = !index_ok;
  float logit_max = 0.f, scale = 0.f;
  if constexpr (V::kKeysAreLogits) {
    sel = RadixSelect<V, false, false>(keys, k, 1.f, 0u, hist, scratch, slots);
    bad |= sel.bad;
  } else if constexpr (V::kInput == 1) {
    bool logit_bad = false;
    logit_max = LogitMax<V>(keys, &logit_bad, scratch, slots);
    scale = 1.4426950408889634f / temperature;
    if constexpr (V::kCandidates) {
      top_p_sel = TopPSelect<V>(keys.With(LogitRow<V>{in, logit_max, scale}), top_p, hist, scratch,
                                slots, cand_state, regions, CandidateForm<V>(p.cand_form), window,
                                exchange, p.stamps);
      sel = top_p_sel.sel;
    } else {
      sel = FilterRow<V>(keys.With(LogitRow<V>{in, logit_max, scale}), k, top_p, min_p, hist,
                         scratch, slots);
    }
    bad |= logit_bad || sel.bad || !(sel.mass > 0);
  } else if constexpr (V::kCandidates) {
    top_p_sel = TopPSelect<V>(keys.With(ProbRow<V>{reinterpret_cast<const float*>(in)}), top_p,
                              hist, scratch, slots, cand_state, regions,
                              CandidateForm<V>(p.cand_form), window, exchange, p.stamps);
    sel = top_p_sel.sel;
    bad |= sel.bad || !(sel.mass > 0);
  } else {
    sel = FilterRow<V>(keys.With(ProbRow<V>{reinterpret_cast<const float*>(in)}), k, top_p, min_p,
                       hist, scratch, slots);
    bad |= sel.bad || !(sel.mass > 0);
  }

  Stamp<V>(p.stamps, kStampSelect);
  if constexpr (V::kOutput == kSample) {
    long long token = -1;
    int owner = -1;
    bool exchanged = false;
    if constexpr (kExchangeable) exchanged = exchange_form && top_p_sel.ok;
    // kFormOwnerEarly: the exchange drew it (top_p_sel.ok: the exchange ran).
    constexpr bool kOwnerEarly = OwnerEarlyForm<V>();
    float u;
    if (kOwnerEarly && exchanged) {
      u = exchange_header.u;
    } else {
      const uint64_t seed = p.seed_ptr ? *p.seed_ptr : p.seed;
      const uint64_t offset = p.offset_ptr ? *p.offset_ptr : p.offset;
      u = UniformDraw(seed, offset, row, 0);
    }
    auto pick = [&](float t) {
      if constexpr (V::kInput == 1)
        return PickIndex<V>(keys.With(LogitRow<V>{in, logit_max, scale}), begin, end, sel.key, t,
                            scratch, pick_scratch);
      else
        return PickIndex<V>(keys.With(ProbRow<V>{reinterpret_cast<const float*>(in)}), begin, end,
                            sel.key, t, scratch, pick_scratch);
    };
    if (exchanged) {
      // Every block holds the same kept candidates' mass and (lane j) block j's mass above b0:
      // the same total, target and owner everywhere, with no cluster barrier. The order: the
      // kept candidates of every block (block 0 draws them), then each block's elements above
      // b0, block by block.
      const int lane = threadIdx.x % 32;
      const double cand = sel.local;  // exchanged: the kept candidates' mass (TopPSelection)
      double a = 0;
      if (lane < kCluster)
        a = kOwnerEarly ? exchange_header.seen_above[lane]
                        : MapaGeneric(&exchange_header, static_cast<uint32_t>(lane))->above;
      a = a > 0 ? a : 0.0;
      double incl = a;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const double y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
      }
      const double total = cand + __shfl_sync(0xffffffffu, incl, 31);
      const double target = static_cast<double>(u) * total;
      const double tgt = target - cand;
      const unsigned has_mass = __ballot_sync(0xffffffffu, a > 0);
      const unsigned holds = __ballot_sync(0xffffffffu, a > 0 && tgt < incl);
      // Rounding past the last block with mass above b0 takes its last element; a target at or
      // past the candidates' mass with no mass above b0 takes the last kept candidate.
      const bool in_cand = target < cand || (has_mass == 0 && cand > 0);
      owner = !(total > 0) ? -1 : in_cand ? 0 : (holds ? __ffs(holds) - 1 : 31 - __clz(has_mass));
      const double before = owner >= 0 ? __shfl_sync(0xffffffffu, incl - a, owner & 31) : 0.0;
      Stamp<V>(p.stamps, kStampOwner);
      if constexpr (kExchangeable) {
        if (owner == rank) {
          if (in_cand) {
            token = PickClusterCandidate<V>(top_p_sel, target < cand ? target : cand, scratch,
                                            cand_state, regions, exchange, chunk);
          } else if constexpr (V::kInput == 1) {
            token = PickTopPAboveOnly<V>(keys.With(LogitRow<V>{in, logit_max, scale}), top_p_sel,
                                         tgt - before, scratch, cand_state,
                                         (CandidateForm<V>(p.cand_form) & kFormWarpWalk) != 0);
          } else {
            token = PickTopPAboveOnly<V>(keys.With(ProbRow<V>{reinterpret_cast<const float*>(in)}),
                                         top_p_sel, tgt - before, scratch, cand_state,
                                         (CandidateForm<V>(p.cand_form) & kFormWarpWalk) != 0);
          }
          if (token < 0) token = pick(0.f);  // rounding pushed the target past the end
        }
      }
    } else {
      // Every block learns each block's kept mass (lane j of every warp: block j's), and all
      // compute the same owner: the block whose share of the kept mass holds u * mass. The filter
      // gave each block its share (its own histogram bins, or its own sum), with no extra pass.
      const double local_mass = kCluster > 1 ? sel.local : sel.mass;
      const double mine[1] = {sel.mass > 0 ? local_mass : 0.0};
      double lanes[1];
      ClusterGather<kCluster, 1>(mine, lanes, slots);
      const double m = lanes[0] > 0 ? lanes[0] : 0.0;
      double incl = m;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const double y = __shfl_up_sync(0xffffffffu, incl, o);
        if (threadIdx.x % 32 >= o) incl += y;
      }
      const double total = __shfl_sync(0xffffffffu, incl, 31);
      const double target = static_cast<double>(u) * total;
      const unsigned has_mass = __ballot_sync(0xffffffffu, m > 0);
      const unsigned holds = __ballot_sync(0xffffffffu, m > 0 && target < incl);
      // Rounding can leave no holder: the last block with mass then draws its first element.
      owner = holds ? __ffs(holds) - 1 : (has_mass ? 31 - __clz(has_mass) : -1);
      const double before = owner >= 0 ? __shfl_sync(0xffffffffu, incl - m, owner & 31) : 0.0;
      Stamp<V>(p.stamps, kStampOwner);
      if (owner == rank) {
        const float local_target = holds ? static_cast<float>(target - before) : 0.f;
        if constexpr (V::kCandidates) {
          if (top_p_sel.ok) {
            const double t = holds ? target - before : 0.0;
            if constexpr (V::kInput == 1)
              token = PickTopPCandidate<V>(keys.With(LogitRow<V>{in, logit_max, scale}), top_p_sel,
                                           t, scratch, cand_state, regions,
                                           (CandidateForm<V>(p.cand_form) & kFormWarpWalk) != 0);
            else
              token = PickTopPCandidate<V>(
                  keys.With(ProbRow<V>{reinterpret_cast<const float*>(in)}), top_p_sel, t, scratch,
                  cand_state, regions, (CandidateForm<V>(p.cand_form) & kFormWarpWalk) != 0);
          } else {
            token = pick(local_target);
          }
        } else {
          token = pick(local_target);
        }
        if (token < 0) token = pick(0.f);  // rounding pushed the target past the end
      }
    }
    Stamp<V>(p.stamps, kStampDraw);
    if (threadIdx.x == 0 && (owner == rank || (owner < 0 && rank == 0))) {
      static_cast<int32_t*>(p.out)[row] = token >= 0 ? static_cast<int32_t>(token) : 0;
      if (p.valid) p.valid[row] = !bad && token >= 0;
    }
  } else if constexpr (V::kOutput == kMaskLogits) {
    T* out = static_cast<T*>(p.out) + row * p.out_stride;
    if (threadIdx.x == 0 && rank == 0 && p.valid) p.valid[row] = !bad;
    {
      const SliceView<V, LogitKeyRow<V>> all = {keys.src,   begin,           end,
                                                keys.cache, keys.cache_vecs, &filling};
      const float neg_inf = NegInf();
      ForEachVec(all, [&](int64_t e, const Raw& r) {
        uint32_t kk[V::kVec];
        bool b = false;
        all.Keys(r, kk, b);
        Vec<T, V::kVec> o;
#pragma unroll
        for (int j = 0; j < V::kVec; ++j)
          o.v[j] = (index_ok && kk[j] >= sel.key && kk[j] != 0u) ? r.v[j] : FromFloat<T>(neg_inf);
        StoreVec(out + e, o);
      });
    }
  } else {
    // Renormalised probabilities (softmax when there is no filter), always fp32.
    float* out = static_cast<float*>(p.out) + row * p.out_stride;
    if (threadIdx.x == 0 && rank == 0 && p.valid) p.valid[row] = !bad;
    {
      const float inv = sel.mass > 0 ? static_cast<float>(1.0 / sel.mass) : 0.f;
      const SliceView<V, LogitKeyRow<V>> all = {keys.src,   begin,           end,
                                                keys.cache, keys.cache_vecs, &filling};
      auto write = [&](const auto& src) {
        ForEachVec(src, [&](int64_t e, const auto& r) {
          float w[V::kVec];
          bool b = false;
          src.Weights(r, w, b);
          Vec<float, V::kVec> o;
#pragma unroll
          for (int j = 0; j < V::kVec; ++j)
            o.v[j] = index_ok && KeyOfWeight(w[j]) >= sel.key ? w[j] * inv : 0.f;
          StoreVec(out + e, o);
        });
      };
      if constexpr (V::kInput == 1)
        write(all.With(LogitRow<V>{in, logit_max, scale}));
      else
        write(all.With(ProbRow<V>{reinterpret_cast<const float*>(in)}));
    }
  }
  // kFormClusterExchange: blocks read each other's shared memory up to the draw; none exits
  // before all have read (kFormEndRelaxed: with no release fence; every distributed load's value
  // has been used by then).
  if (exchange_form) {
    if constexpr (EndRelaxedForm<V>()) {
      ClusterArriveRelaxed();
      ClusterWaitAcquire();
    } else {
      ClusterSync();
    }
  }
  Stamp<V>(p.stamps, kStampEnd);
  StampTimer<V>(p.stamps, kStampTimerEnd);
}

}  // namespace flashjit::sampling
