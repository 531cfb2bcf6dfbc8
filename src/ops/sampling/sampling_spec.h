// The typed specs of the sampling families and the choice of variant for a shape.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

// Values of the variant fields, as the kernel's enums (templates/sampling/sampling.cuh).
enum class SamplingInput : uint8_t { kProbs = 0, kLogits = 1 };
enum class SamplingFilter : uint8_t {
  kNone = 0,
  kTopK = 1,
  kTopP = 2,
  kMinP = 3,
  kJoint = 4,
  kTopKFirst = 5
};
enum class SamplingOutput : uint8_t { kSample = 0, kProbs = 1, kMaskLogits = 2 };

struct SamplingSpec {
  static constexpr uint32_t kFamilyId = FamilyId("sampling");
  DType dtype = DType::kF32;  // input element
  SamplingInput input = SamplingInput::kProbs;
  SamplingFilter filter = SamplingFilter::kNone;
  SamplingOutput output = SamplingOutput::kSample;
  uint16_t threads = 1024;
  uint8_t vec = 4;
  uint8_t cluster = 1;  // blocks per row (a thread-block cluster when > 1)
  uint8_t cache = 0;    // 1: blocks keep (part of) their slice in dynamic shared memory
  uint8_t candidates =
      0;               // 1: top-p sampling in two passes (templates/sampling/top_p_candidates.cuh)
  uint8_t stamps = 0;  // 1: phase stamps (benchmarks; SamplingTuning::stamps)
  // The two-pass top-p kernel's digit scans, bits: 1 with 3 block barriers instead of 6 (variant
  // field fast_scan), 2 at digits 2-3 the mass above the bin from the scan's exact prefix: 2
  // barriers (exact_prefix), 4 (with 2) digits 2-3 scanned in integers by every warp: 1 barrier
  // (warp_scan). The default: 7 since session 8, 3 in clusters of blocks of fewer than 512
  // threads (SamplingTuning::candidates 9: 1 only, 10: 3 everywhere, session 7's default, 11: 0,
  // session 6's block scans).
  uint8_t fast_scan = 0;  // (in the former padding byte: the spec's bytes are its key)
  // The two-pass kernel's kForm* bits compiled into the variant (variant field form: the forms
  // the launch never takes are left out), -1: chosen at run time by SamplingParams::cand_form.
  // (16 bits since session 10 round 2: the kForm* bits reach 512; it took int8_t and a pad byte.)
  int16_t form = -1;

  Result<VariantSpec> ToVariant() const;
};

struct SpeculativeSpec {
  static constexpr uint32_t kFamilyId = FamilyId("chain_speculative");
  uint16_t threads = 1024;
  uint8_t vec = 4;
  uint8_t pad_ = 0;

  Result<VariantSpec> ToVariant() const;
};

// Threads per block for rows of `vocab` elements read `vec` at a time, `batch` rows.
int ChooseSamplingThreads(int64_t vocab, int vec, int64_t batch);

// How a sampling launch splits rows: `cluster` blocks per row, each over `chunk` elements with
// `threads` threads, keeping `cache_vecs` vectors of its slice in shared memory.
struct SamplingLaunch {
  int threads = 1024;
  int cluster = 1;
  int64_t chunk = 0;
  int32_t cache_vecs = 0;
};
// The largest shared-memory slice cache a block may hold.
constexpr int64_t kSamplingMaxCacheBytes = 160 * 1024;
// The largest slice cached when the caller does not say (two blocks per SM).
constexpr int64_t kSamplingAutoCacheBytes = 64 * 1024 + 512;
// `cluster` / `cache_bytes`: 0 / -1 to choose. `clusters_ok`: the device runs clusters (sm_90+).
// `sms`: the device's SM count (0 when unknown).
SamplingLaunch ChooseSamplingLaunch(int64_t vocab, int vec, int elem_bytes, int64_t batch,
                                    bool clusters_ok, int sms, int cluster, int64_t cache_bytes);

// The two-pass top-p path keeps each warp's share of the boundary bin's elements (8 bytes each)
// in shared memory after the slice cache. Entries per warp for a block of `threads` over
// `chunk` elements whose cache takes `cache_bytes`: room for a sixth of the slice, at most 1024
// per warp and within the shared memory left; 0 when less than 32 per warp fit or the block
// has 1024 threads (then the radix select over the slice runs instead). `columns` (the
// per-lane candidate columns, tuning.candidates 6): room for half the slice, since each lane's
// column holds only its own elements (a sixth of them would leave 6 per lane at B = 1 x 128256
// in clusters of 8, where a flat row gives a lane about 1 on average and some lane of the row
// more than 6 in about a third of the rows).
int SamplingCandidatesPerWarp(int64_t chunk, int threads, int64_t cache_bytes,
                              bool columns = false);
// Whether the two-pass top-p kernel keeps pass 2's candidates in per-lane columns
// (kFormLaneColumns) for `candidates` (SamplingTopPForm::columns: 6 always, the default and the
// forms built on it by the default's rule, 7 and the older forms never), `cluster` blocks per row,
// `batch` rows on `sms` SMs (0: unknown, taken as 132). The default takes them where they paid on
// the H200 (2026-11-29, session 5 round 2, docs/perf/sampling.md; b2b): clusters of 2 (B = 64 x
// 128256 flat 44.3 -> 41.9 us, peaked the same; x 32000 -0.2) and one block per row with more rows
// than SMs (B = 256 x 128256 flat 112.7 -> 102.7, peaked 90.4 -> 91.6; x 32000 flat -2.6, peaked
// the same); not in clusters of 8 (B = 1: +0.1-0.3 us) nor 4 (unmeasured), nor one block per row on
// fewer rows than SMs (unmeasured).
bool SamplingLaneColumns(int candidates, int cluster, int64_t batch, int sms);
// Whether the two-pass top-p kernel runs the cluster exchange (kFormClusterExchange: one cluster
// barrier after pass 2, then digits 2-3 and the draw over every block's candidates in every
// block) for `candidates` (SamplingTopPForm::exchange: the default and the forms built on it, not
// 8 nor the older forms) and `cluster` blocks per row: every cluster size. Measured on the H200
// (2026-11-30, session 6, docs/perf/sampling.md; b2b, flat / peaked): B = 1 x 128256 (clusters of
// 8) 30.3 / 23.5 -> 26.9 / 20.1 us, B = 64 (clusters of 2) 42.7 / 34.1 -> 41.5 / 31.8, x 32000 -2.3
// to -3.2; clusters of 4 only in the GPU tests (unmeasured).
bool SamplingClusterExchange(int candidates, int cluster);
// The two-pass top-p kernel's form for each SamplingTuning::candidates value (-1 .. 22), one row
// of a table (sampling_family.cc: kSamplingTopPForms, with what each value is for): the rules
// below and RunSampling read it instead of lists of values.
struct SamplingTopPForm {
  bool two_pass;      // false (0): the radix select over the whole row
  uint8_t bits_mask;  // the kForm* bits the form may take (2: none, 3: the warp walk only)
  bool lean;          // kFormClusterLean (fully unrolled merges, bad flag with pass 2's)
  bool window;        // kFormLaneWindow where it pays (more rows than SMs, long slices)
  int8_t columns;     // kFormLaneColumns: 1 always, 0 never, -1 where they paid
  bool exchange;      // kFormClusterExchange in clusters
  int8_t fast_scan;   // SamplingSpec::fast_scan; -1: 7, or 3 in clusters of < 512-thread blocks
  int8_t compiled;    // the form compiled in (variant field form): 1 always, 0 never, -1 in
                      // clusters of 8 and 2
  bool digit3_push;   // kFormDigit3Push where it can run (the exchange, fast_scan 7, compiled)
  // With digit3_push, session 10 round 2's levers: 1 kFormPushZeroLean, 2 kFormEndsWithHeader,
  // 4 kFormKeys2Rounds (in clusters of at most 4); 8: kFormEndsWithHeader only in clusters of at
  // most 4 (the default's rule); session 11's: 32 kFormOwnerEarly, 64 kFormEndRelaxed.
  uint8_t push_levers = 0;
};
// The row of `candidates`, -1 .. 22 (the caller checks the range).
const SamplingTopPForm& SamplingTopPFormOf(int candidates);
// What the two-pass top-p kernel runs for `candidates` in a launch of `cluster` blocks of
// `threads` threads per row over slices of `chunk` elements, `batch` rows on `sms` SMs (0:
// unknown, taken as 132): pass 2's lane columns, the cluster exchange, SamplingSpec::fast_scan,
// the kForm* bits (SamplingParams::cand_form) and whether they are compiled into the variant.
struct SamplingTopPChoice {
  bool lane_columns = false;
  bool exchange = false;
  int fast_scan = 0;
  int cand_form = 0;
  bool compiled = false;
};
SamplingTopPChoice ChooseSamplingTopPForm(int candidates, int cluster, int threads, int64_t chunk,
                                          int64_t batch, int sms);

// The two-pass top-p kernel's pass 1 adds into lane-private window bins
// (templates/sampling/top_p_candidates.cuh) with one block per row for more rows than SMs
// (sampling_run.cc, measured) and slices of at least this many elements: on shorter ones
// clearing and merging the window's 2 x 128 x 32 words would be a large part of the pass (a
// guess, not measured).
constexpr int64_t kSamplingLaneWindowMinChunk = 8192;
// Dynamic shared memory the candidate path reserves beyond the cache.
constexpr int64_t kSamplingMaxDynamicSmem = 200 * 1024;

}  // namespace flashjit::ops
