// Params of the sampling kernels: plain data shared by host and device.
#pragma once

#include "common/config.cuh"

namespace flashjit::sampling {

// SamplingParams::cand_form of the two-pass top-p kernel (top_p_candidates.cuh), bit by bit:
// the default sets them where they pay; A/B clears some.
constexpr int kFormWarpWalk = 1;      // the draw's walk by the holder's warp, not the holder alone
constexpr int kFormBits = 2;          // passes 1 and 2 on weight bits tested as integers
constexpr int kFormLaneWindow = 4;    // with kFormBits: pass 1 into lane-private window bins
constexpr int kFormClusterLean = 8;   // cluster merges fully unrolled; bad flag with pass 2's
constexpr int kFormLaneColumns = 16;  // with kFormBits: pass 2's candidates in per-lane columns

// Bins of the two-pass top-p kernel's lane-private window (top_p_candidates.cuh: LaneWindow): two
// arrays of kLaneWindowBins x 32 words, kept in the candidate regions' memory, which the host
// sizes to at least kLaneWindowBytes.
constexpr int kLaneWindowBins = 128;
constexpr int kLaneWindowBytes = kLaneWindowBins * 32 * 4 * 2;

// One block (or one cluster of V::kCluster blocks) per output row r. The input row is indices[r]
// when `indices` is set, else r. Per-row arrays (k, p, min_p, temperature) are indexed by the
// output row and override the scalars when non-null. seed/offset are read from device memory when
// the pointers are set (CUDA-graph replay with new values).
struct SamplingParams {
  const void* input;             // [rows_in, vocab] probs (f32) or logits, row stride in_stride
  const void* indices;           // [batch] int32 or int64 (index_bytes), or null
  void* out;                     // samples int32 [batch], or [batch, vocab] rows of out_stride
  uint8_t* valid;                // [batch] 1 = row was finite, non-negative, positive mass
  const int32_t* top_k_arr;      // [batch] or null
  const float* top_p_arr;        // [batch] or null
  const float* min_p_arr;        // [batch] or null
  const float* temperature_arr;  // [batch] or null
  const uint64_t* seed_ptr;      // device scalar or null
  const uint64_t* offset_ptr;    // device scalar or null
  int64_t batch;
  int64_t vocab;
  int64_t rows_in;
  int64_t in_stride;
  int64_t out_stride;
  uint64_t seed;
  uint64_t offset;
  int32_t top_k;
  float top_p;
  float min_p;
  float temperature;
  int32_t index_bytes;    // 4 or 8
  int32_t cache_vecs;     // vectors of its slice each block keeps in dynamic shared memory
  int64_t chunk;          // elements per block when a cluster of blocks shares a row
  int32_t cand_per_warp;  // kCandidates: entries of each warp's candidate region
  int32_t cand_form;      // kCandidates: kForm* bits (top_p_candidates.cuh); fewer for A/B only
};
FLASHJIT_CHECK_PARAMS(SamplingParams, 176);

// Chain speculative sampling: n draft tokens per row, n + 1 target distributions.
struct SpeculativeParams {
  const float* draft_probs;   // [batch, n, vocab]
  const int32_t* draft_ids;   // [batch, n]
  const float* target_probs;  // [batch, n + 1, vocab]
  int32_t* out_ids;           // [batch, n + 1], -1 after the emitted tokens
  int32_t* accepted;          // [batch] += drafts accepted independently, or null
  int32_t* emitted;           // [batch] += drafts emitted, or null
  const uint64_t* seed_ptr;
  const uint64_t* offset_ptr;
  int64_t batch;
  int64_t num_draft;
  int64_t vocab;
  uint64_t seed;
  uint64_t offset;
};
FLASHJIT_CHECK_PARAMS(SpeculativeParams, 104);

}  // namespace flashjit::sampling
