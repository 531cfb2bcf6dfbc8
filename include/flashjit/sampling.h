// Sampling ops over rows of a vocabulary, sorting-free. Names and arguments follow FlashInfer's
// Python `flashinfer.sampling` so that a Python layer maps one to one. All ops run on the
// caller's stream, allocate nothing, and return before the kernel finishes; a bad argument
// returns InvalidArgument before anything is launched or written.
//
// Shapes: probs [rows, vocab] fp32; logits [rows, vocab] fp32, fp16 or bf16 (rows may be
// strided, unit inner stride). `indices` (optional, int32 or int64 [batch]) maps output row r to
// input row indices[r]; without it batch = rows. Samples are int32 [batch].
//
// Filters keep every token whose weight is >= a threshold, so ties at the boundary are all
// kept (top-k can keep more than k tokens when the k-th weight is tied):
//   top-k:  the threshold is the k-th largest weight.
//   top-p:  the largest threshold whose kept mass is >= top_p * row mass (probs need not sum
//           to 1; the row's own mass is the total).
//   min-p:  min_p * the largest weight.
// k, p and min_p are a scalar, or a per-row tensor ([batch], int32 / fp32) when its data is
// set; per-row values are clamped on the device (k into [1, vocab], p into (0, 1], min_p into
// [0, 1]).
//
// Randomness: Philox4x32-10 keyed by seed, counter (offset, output row, draw). The same
// seed/offset gives the same tokens for the same call. The draw walks the kept tokens in an
// order that depends on the kernel the shape selects (rows split over clusters, top-p's
// two-pass or radix-select kernel), so another batch size or vocabulary, or another library
// version, may draw another token for the same seed; the distribution is the same. seed_device /
// offset_device (uint64 in device memory), when set, are read by the kernel, so a captured CUDA
// graph replays with new values.
//
// Bad numbers: a NaN, infinite or negative probability (NaN or +inf logit) has weight 0 and
// marks the row invalid; a row with no mass left, or an out-of-range index, is invalid and
// samples token 0. `valid` (optional, uint8/bool [batch]) receives 1 for valid rows. Token ids
// are always in [0, vocab).
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <cstdint>

namespace flashjit {

struct FLASHJIT_API SamplingRng {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const void* seed_device = nullptr;    // uint64 on the input's device, overrides seed
  const void* offset_device = nullptr;  // uint64 on the input's device, overrides offset
};

// Overrides of how a launch is split, for tests and benchmarks; the defaults let the library
// choose. Results do not depend on them (the same seed/offset may draw a different token under
// another split, from the same distribution).
struct FLASHJIT_API SamplingTuning {
  int cluster = 0;           // blocks per row: 1, 2, 4 or 8 (> 1 needs sm_90+); 0: chosen
  int64_t cache_bytes = -1;  // shared memory per block caching its slice, 0..163840; -1: chosen
  // Top-p sampling only (ignored by the other ops): 1 two passes over the row (a coarse
  // histogram, then the boundary bin's elements refined in shared memory), 0 the radix select
  // over the whole row (three histogram passes and a pick pass); -1: chosen (two passes wherever
  // the block has at most 512 threads). For A/B only: 2 two passes as first written (float
  // weight tests, the draw walked by one thread), 3 the same with the draw walked by one warp,
  // 4 session 4's final form (no lane-private window in pass 1, no lean cluster steps), 5 as 1
  // without the lean cluster steps, 6 as 1 with pass 2's boundary-bin candidates in per-lane
  // columns (no ballots) at every launch shape (1 takes them with clusters of 2 and with one
  // block per row for more rows than SMs), 7 as 1 with the per-warp ballots everywhere, 8 as 1
  // without the cluster exchange (clusters: digits 2-3 merged over the cluster, session 5's
  // cluster steps), 9 as 1 without the exact prefix at digits 2-3 (the digits' scans in 3 block
  // barriers; 1 takes 2 there), 10 as 1 without the integer scans of digits 2-3 by every warp
  // (2 block barriers per digit there; 1 takes 1, except in clusters of 256-thread blocks), 11
  // as 1 with session 6's block scans (6 block barriers per digit), 12 as -1 with every form's code
  // in one kernel (the form chosen at run time), 13 as -1 with the launch's form compiled into
  // the kernel (the forms it never takes left out) at every launch shape (-1 takes it in
  // clusters of 8 and 2; session 9's default), 14 as 13 with digit 3's histogram from each
  // block's own candidates, its counts pushed into every block of the cluster (kFormDigit3Push;
  // where 13 runs the cluster exchange and the integer digit scans, else 13; -1 takes it where
  // its form is compiled in; session 10's default), 15 as 14 zeroing only the 64 push words
  // digit 0's scan wrote, 16 as 15 with digit 2's candidate bounds loaded with the exchange's
  // header, 17 as 16 with two rounds of keys in flight in digit 2's fill in clusters of at most
  // 4 (15-17: session 10 round 2, each where 14 pushes), 18 as 20 (session 11's digit-0 merge push,
  // reverted), 19 as 20 with every block's mass above the boundary bin read with the exchange's
  // header and the uniform drawn in its barrier's shadow (19-22: session 11, each where 14 pushes),
  // 20 session 10 round 2's default (15 in clusters of 8, 17 in clusters of 2), 21 as 20 with the
  // last cluster barrier arrived without a release fence, 22 as 21 with the owner's inputs early
  // (-1 takes 22 where 14 pushes, since session 11). 9-22 compute the same sums and draw the same
  // tokens as 1.
  int candidates = -1;
  // Threads per block: 32, 64, ..., 1024 (>= 256 with clusters); 0: chosen.
  int threads = 0;
  // Benchmarks only: a device buffer of (launched blocks) x 16 uint64 that the two-pass top-p
  // kernel fills with phase stamps (clock64 per phase boundary, %globaltimer at its start and
  // end: templates/sampling/sampling_params.cuh, kStamp*); it runs a variant compiled with
  // them. null: none. Top-p sampling on the two-pass path only (ignored elsewhere).
  void* stamps = nullptr;
};

struct FLASHJIT_API SamplingOptions {
  TensorView indices;  // optional: data == nullptr means none
  TensorView valid;    // optional output
  SamplingRng rng;
  void* stream = nullptr;
  SamplingTuning tuning;
};

// How top-k and top-p combine (FlashInfer's filter_apply_order).
enum class FilterApplyOrder : uint8_t {
  kTopKFirst = 0,  // top-k, renormalise, then top-p over what top-k kept
  kJoint = 1,      // both on the original distribution: the intersection
};

// out = softmax(logits / temperature), fp32 [batch, vocab]. temperature_arr: optional [batch].
FLASHJIT_API Status Softmax(Engine& engine, const TensorView& logits, const TensorView& out,
                            float temperature = 1.f, const TensorView& temperature_arr = {},
                            void* stream = nullptr);

FLASHJIT_API Status SamplingFromProbs(Engine& engine, const TensorView& probs,
                                      const TensorView& samples,
                                      const SamplingOptions& options = {});
// Samples from softmax(logits) (temperature 1).
FLASHJIT_API Status SamplingFromLogits(Engine& engine, const TensorView& logits,
                                       const TensorView& samples,
                                       const SamplingOptions& options = {});
// REQUIRES: 1 <= top_k <= vocab (when top_k_arr is empty).
FLASHJIT_API Status TopKSamplingFromProbs(Engine& engine, const TensorView& probs,
                                          const TensorView& samples, int top_k,
                                          const TensorView& top_k_arr = {},
                                          const SamplingOptions& options = {});
// REQUIRES: 0 < top_p <= 1 (when top_p_arr is empty).
FLASHJIT_API Status TopPSamplingFromProbs(Engine& engine, const TensorView& probs,
                                          const TensorView& samples, float top_p,
                                          const TensorView& top_p_arr = {},
                                          const SamplingOptions& options = {});
// REQUIRES: 0 <= min_p <= 1 (when min_p_arr is empty).
FLASHJIT_API Status MinPSamplingFromProbs(Engine& engine, const TensorView& probs,
                                          const TensorView& samples, float min_p,
                                          const TensorView& min_p_arr = {},
                                          const SamplingOptions& options = {});
FLASHJIT_API Status TopKTopPSamplingFromProbs(Engine& engine, const TensorView& probs,
                                              const TensorView& samples, int top_k,
                                              const TensorView& top_k_arr, float top_p,
                                              const TensorView& top_p_arr,
                                              FilterApplyOrder order = FilterApplyOrder::kTopKFirst,
                                              const SamplingOptions& options = {});
// Softmax (temperature 1) of the logits, then as TopKTopPSamplingFromProbs.
FLASHJIT_API Status TopKTopPSamplingFromLogits(
    Engine& engine, const TensorView& logits, const TensorView& samples, int top_k,
    const TensorView& top_k_arr, float top_p, const TensorView& top_p_arr,
    FilterApplyOrder order = FilterApplyOrder::kTopKFirst, const SamplingOptions& options = {});

// out [batch, vocab] fp32 = probs kept by the filter / their mass, 0 elsewhere (all 0 for a
// row with no mass). `out` may alias `probs` exactly (without indices).
FLASHJIT_API Status TopKRenormProbs(Engine& engine, const TensorView& probs, const TensorView& out,
                                    int top_k, const TensorView& top_k_arr = {},
                                    void* stream = nullptr);
FLASHJIT_API Status TopPRenormProbs(Engine& engine, const TensorView& probs, const TensorView& out,
                                    float top_p, const TensorView& top_p_arr = {},
                                    void* stream = nullptr);
// out [batch, vocab] (logits' dtype) = logits for the k largest (ties kept), -inf elsewhere;
// NaN logits become -inf.
FLASHJIT_API Status TopKMaskLogits(Engine& engine, const TensorView& logits, const TensorView& out,
                                   int top_k, const TensorView& top_k_arr = {},
                                   void* stream = nullptr);

// draft_probs fp32 [batch, n, vocab], draft_token_ids int32 [batch, n], target_probs fp32
// [batch, n + 1, vocab], all contiguous. Writes output_token_ids int32 [batch, n + 1]: the
// accepted drafts, then the replacement (or bonus) token, then -1. When given (int32 [batch]),
// accepted_token_num += drafts that would be accepted each on its own, and
// emitted_draft_token_num += drafts emitted (FlashInfer's in-place accumulation).
FLASHJIT_API Status ChainSpeculativeSampling(Engine& engine, const TensorView& draft_probs,
                                             const TensorView& draft_token_ids,
                                             const TensorView& target_probs,
                                             const TensorView& output_token_ids,
                                             const TensorView& accepted_token_num = {},
                                             const TensorView& emitted_draft_token_num = {},
                                             const SamplingRng& rng = {}, void* stream = nullptr);

}  // namespace flashjit
