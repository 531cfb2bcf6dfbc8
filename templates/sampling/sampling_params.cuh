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
// Clusters, with kFormBits and kFormClusterLean: after pass 2 one exchange (a cluster barrier)
// gives every block each block's b0 size, flags and mass above b0; every block then reads all
// blocks' candidates where they lie (distributed shared memory) for digits 2-3 and the draw,
// with no further cluster barrier until the last one before the blocks exit.
constexpr int kFormClusterExchange = 32;
// With kFormClusterExchange, the fast digit scans in integers (warp_scan) and the form compiled
// in (variant field form; every-form kernels leave it out): digit 3's histogram from each
// block's own candidates, pushed into every block's spare count words (red.shared::cluster) and
// one cluster barrier, instead of every block reading every block's candidates again through
// distributed shared memory (top_p_candidates.cuh).
constexpr int kFormDigit3Push = 64;
// With kFormDigit3Push (session 10 round 2, A/B): the exchange zeroes only the 64 push words
// digit 0's scan wrote (h.count[kRadixBins - 64 ..]) instead of all 1024 (digit 0's clear left
// the others at 0 and nothing writes them before the push).
constexpr int kFormPushZeroLean = 128;
// With kFormDigit3Push: each thread's candidate bounds in every block (digit 2's fill) loaded
// with the exchange's header read, one distributed-shared-memory round trip instead of two.
constexpr int kFormEndsWithHeader = 256;
// With kFormDigit3Push in clusters of at most 4: digit 2's fill loads two rounds of every
// block's keys at once (2 x kCluster loads in flight per thread).
constexpr int kFormKeys2Rounds = 512;
// With kFormDigit3Push (session 11, A/B): the owner's inputs ready before the draw. Every
// block's mass above b0 read with the exchange's header (one distributed round trip fewer at
// the draw) into this block's header, and the uniform drawn by thread 0 between the exchange's
// cluster arrive and wait (its Philox rounds and the seed's load in the barrier's shadow).
constexpr int kFormOwnerEarly = 2048;
// With kFormDigit3Push (session 11, A/B): the last cluster barrier (every block's shared memory
// alive until all have read it) arrives relaxed: no release fence (MEMBAR.ALL.GPU, which waits
// for the owner's stores of the token to reach the L2) before it. Every distributed load before
// it has returned its value (each is used before the arrive); the kernel's end publishes the
// token.
constexpr int kFormEndRelaxed = 4096;

// Phase stamps (benchmarks only; the variant field `stamps`): slots per block, thread 0's
// clock64() at a phase boundary (kStamp* below; 0 where the phase did not run), and
// %globaltimer at the kernel's start and end (kStampTimerStart / kStampTimerEnd).
constexpr int kStampSlots = 16;
enum StampSlot : int {
  kStampStart = 0,        // before pass 1
  kStampPass1 = 1,        // pass 1 (and the lane window's merge) done
  kStampMerge0 = 2,       // clusters: digit 0's histogram merged
  kStampScan0 = 3,        // digit 0's scan and decisions: b0 known
  kStampPass2 = 4,        // pass 2's loop done
  kStampPass2Sync = 5,    // pass 2's reductions (and the cluster exchange or reduction) done
  kStampDigit1 = 6,       // digit 2 (bits 19..10) done
  kStampDigit2 = 7,       // digit 3 (bits 9..0) done
  kStampSelect = 8,       // the threshold and the row's flags known
  kStampOwner = 9,        // the owner block known (clusters: the gather, or the exchange's sums)
  kStampDraw = 10,        // the owner's draw done
  kStampEnd = 11,         // after the last barrier
  kStampFill1 = 12,       // digit 2's histogram filled (between kStampPass2Sync and kStampDigit1)
  kStampFill2 = 13,       // digit 3's histogram filled (between kStampDigit1 and kStampDigit2)
  kStampTimerStart = 14,  // %globaltimer, ns
  kStampTimerEnd = 15,
};

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
  uint64_t* stamps;       // V::kStamps: [blocks][kStampSlots] phase stamps, or null
};
FLASHJIT_CHECK_PARAMS(SamplingParams, 184);

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
