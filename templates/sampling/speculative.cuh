// Chain speculative sampling (Leviathan et al. 2023; Chen et al. 2023), one block per request:
// draft token j is accepted when u_j * q_j(t) < p_j(t); at the first rejection a replacement is
// drawn from max(p_j - q_j, 0) renormalised (p_j itself if that is all zero); when all n drafts
// are accepted a bonus token is drawn from p_n.
//
// Variant: kThreads, kVec (fp32 only: DType = float).
#pragma once

#include "sampling/philox.cuh"
#include "sampling/pick.cuh"
#include "sampling/sampling_params.cuh"

namespace flashjit::sampling {

// max(target - draft, 0) over two rows of probabilities (draft may be null: the target alone).
template <class V>
struct ResidualRow {
  struct Raw {
    Vec<float, V::kVec> t, d;
  };
  const float* target;
  const float* draft;
  FLASHJIT_DEVICE Raw Load(int64_t e) const {
    Raw r;
    r.t = LoadRowVec<float, V::kVec>(target + e);
    if (draft) r.d = LoadRowVec<float, V::kVec>(draft + e);
    return r;
  }
  FLASHJIT_DEVICE void Weights(const Raw& r, float (&w)[V::kVec], bool& bad) const {
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) {
      const float t = r.t.v[j], d = draft ? r.d.v[j] : 0.f;
      const bool ok = t >= 0.f && t <= kFloatMax && d >= 0.f && d <= kFloatMax;
      bad |= !ok;
      w[j] = ok && t > d ? t - d : 0.f;
    }
  }
};

FLASHJIT_DEVICE float SanitizedProb(float x) { return x >= 0.f && x <= kFloatMax ? x : 0.f; }

// A draw from the weights of `src` with uniform u; -1 when the row has no mass.
template <class V, class Src>
FLASHJIT_DEVICE long long DrawFrom(const Src& src, int64_t n, float u, BlockScratch& s,
                                   PickScratch& ps) {
  float sum = 0.f;
  bool bad = false;
  ForEachVec<V>(src, n, [&](int64_t, const typename Src::Raw& r) {
    float w[V::kVec];
    src.Weights(r, w, bad);
#pragma unroll
    for (int j = 0; j < V::kVec; ++j) sum += w[j];
  });
  const float total = BlockReduce<V::kThreads>(sum, s, OpAdd());
  if (!(total > 0.f)) return -1;
  long long t = PickIndex<V>(src, n, 0u, u * total, s, ps);
  if (t < 0) t = PickIndex<V>(src, n, 0u, 0.f, s, ps);
  return t;
}

template <class V>
__device__ void chain_speculative(const SpeculativeParams& p) {
  __shared__ BlockScratch scratch;
  __shared__ PickScratch pick_scratch;
  const int64_t row = blockIdx.x, n = p.num_draft, vocab = p.vocab;
  const uint64_t seed = p.seed_ptr ? *p.seed_ptr : p.seed;
  const uint64_t offset = p.offset_ptr ? *p.offset_ptr : p.offset;
  const int32_t* ids = p.draft_ids + row * n;
  const float* draft = p.draft_probs + row * n * vocab;
  const float* target = p.target_probs + row * (n + 1) * vocab;

  int accepted = 0;
  int64_t first_reject = n;
  for (int64_t j = 0; j < n; ++j) {
    const int32_t t = ids[j];
    const bool in_range = t >= 0 && t < vocab;
    const float q = in_range ? SanitizedProb(draft[j * vocab + t]) : 0.f;
    const float pt = in_range ? SanitizedProb(target[j * vocab + t]) : 0.f;
    const float u = UniformDraw(seed, offset, row, static_cast<uint32_t>(j + 1));
    const bool accept = in_range && u * q < pt;
    accepted += accept;
    if (!accept && first_reject == n) first_reject = j;
  }
  const float u = UniformDraw(seed, offset, row, 0);
  const float* t_row = target + first_reject * vocab;
  long long token = -1;
  if (first_reject < n)
    token = DrawFrom<V>(ResidualRow<V>{t_row, draft + first_reject * vocab}, vocab, u, scratch,
                        pick_scratch);
  if (token < 0)
    token = DrawFrom<V>(ResidualRow<V>{t_row, nullptr}, vocab, u, scratch, pick_scratch);
  if (threadIdx.x == 0) {
    int32_t* out = p.out_ids + row * (n + 1);
    for (int64_t i = 0; i <= n; ++i)
      out[i] = i < first_reject
                   ? ids[i]
                   : (i == first_reject ? static_cast<int32_t>(token < 0 ? 0 : token) : -1);
    if (p.accepted) p.accepted[row] += accepted;
    if (p.emitted) p.emitted[row] += static_cast<int32_t>(first_reject);
  }
}

}  // namespace flashjit::sampling
