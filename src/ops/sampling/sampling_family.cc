// The sampling op families: their variant fields, templates and entry points.
#include <fmt/format.h>

#include <algorithm>

#include "sampling/sampling_params.cuh"
#include "src/ops/sampling/sampling_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const char* const kInputs[] = {"probs", "logits"};
const char* const kFilters[] = {"none", "top_k", "top_p", "min_p", "joint", "top_k_first"};
const char* const kOutputs[] = {"sample", "probs", "mask"};

int IndexOf(const char* const* names, int count, const std::string& name) {
  for (int i = 0; i < count; ++i)
    if (name == names[i]) return i;
  return -1;
}

const spec::OpFamily* SamplingFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "sampling";
    f.doc = "Sorting-free filtered sampling, renormalisation and masking over rows of a vocabulary";
    f.header = "sampling/sampling.cuh";
    f.fields = {
        spec::EnumField("input", {"probs", "logits"}, nullptr, "what the input rows hold"),
        spec::EnumField("dtype", {"f32", "f16", "bf16"}, "f32", "input element type"),
        spec::EnumField("filter", {"none", "top_k", "top_p", "min_p", "joint", "top_k_first"},
                        "none", "which tokens are kept"),
        spec::EnumField("output", {"sample", "probs", "mask"}, "sample",
                        "a token per row, renormalised fp32 probs, or masked logits"),
        spec::IntField("threads", {32, 64, 128, 256, 512, 1024}, 1024, "t", "threads per row"),
        spec::IntField("vec", {1, 2, 4}, 4, "v", "elements per vector access"),
        spec::IntField("cluster", {1, 2, 4, 8}, 1, "c",
                       "blocks per row: a thread-block cluster (sm_90+) when > 1"),
        spec::BoolField("cache", false, "sc",
                        "blocks keep their slice in dynamic shared memory after the first pass"),
        spec::BoolField("candidates", false, "pc",
                        "top-p sampling in two passes: a coarse histogram, then the boundary "
                        "bin's elements refined in shared memory"),
        spec::BoolField("stamps", false, "ts",
                        "benchmarks: the two-pass top-p kernel writes clock stamps at its phase "
                        "boundaries (SamplingParams::stamps)"),
        spec::BoolField("fast_scan", false, "fs",
                        "A/B: the two-pass top-p kernel's digit scans with 3 block barriers "
                        "instead of 6, the same sums (top_p_candidates.cuh, TopPScanDigit)"),
        spec::BoolField("exact_prefix", false, "ep",
                        "with fast_scan: digits 2-3 take the mass above the chosen bin from the "
                        "scan's exact prefix (2 block barriers per digit instead of 3)"),
        spec::BoolField("warp_scan", false, "ws",
                        "with exact_prefix: digits 2-3 scanned in integers, the chosen bin found "
                        "by every warp itself (1 block barrier per digit; TopPScanDigitWarp)"),
        spec::IntRangeField(
            "form", -1, 8191, -1, "cf",
            "the two-pass top-p kernel's kForm* bits (sampling_params.cuh) compiled "
            "in: the forms the launch never takes are left out; -1: every form's "
            "code, the launch's SamplingParams::cand_form chooses"),
    };
    f.entries = {{"flashjit_sampling", "flashjit::sampling::sample_rows",
                  "flashjit::sampling::SamplingParams", "Variant::kThreads, Variant::kMinBlocks"}};
    f.check = [](const spec::Json& s) -> Status {
      const std::string input = s["input"], dtype = s["dtype"], output = s["output"],
                        filter = s["filter"];
      if (input == "probs" && dtype != "f32")
        return Status::InvalidArgument(
            fmt::format("sampling: dtype {} with input probs; probs must be f32", dtype));
      if (output == "mask" && (input != "logits" || filter != "top_k"))
        return Status::InvalidArgument("sampling: output mask needs input logits and filter top_k");
      if (s["cluster"].get<int>() > 1 && s["threads"].get<int>() < 256)
        return Status::InvalidArgument(
            fmt::format("sampling: cluster {} needs threads >= 256 (got {})",
                        s["cluster"].get<int>(), s["threads"].get<int>()));
      if (s["candidates"].get<bool>() && (filter != "top_p" || output != "sample"))
        return Status::InvalidArgument(
            fmt::format("sampling: candidates needs filter top_p and output sample (got {} / {})",
                        filter, output));
      if (s["stamps"].get<bool>() && !s["candidates"].get<bool>())
        return Status::InvalidArgument(
            "sampling: stamps needs candidates (the two-pass top-p kernel)");
      if (s["fast_scan"].get<bool>() && !s["candidates"].get<bool>())
        return Status::InvalidArgument(
            "sampling: fast_scan needs candidates (the two-pass top-p kernel)");
      if (s["exact_prefix"].get<bool>() && !s["fast_scan"].get<bool>())
        return Status::InvalidArgument("sampling: exact_prefix needs fast_scan (TopPScanDigit)");
      if (s["warp_scan"].get<bool>() && !s["exact_prefix"].get<bool>())
        return Status::InvalidArgument("sampling: warp_scan needs exact_prefix");
      if (s["form"].get<int>() >= 0 && !s["candidates"].get<bool>())
        return Status::InvalidArgument(
            "sampling: form needs candidates (the two-pass top-p kernel)");
      if (s["form"].get<int>() >= 0 && (s["form"].get<int>() & sampling::kFormDigit3Push) &&
          (!s["warp_scan"].get<bool>() || s["cluster"].get<int>() < 2 ||
           !(s["form"].get<int>() & sampling::kFormClusterExchange)))
        return Status::InvalidArgument(
            "sampling: form bit kFormDigit3Push needs warp_scan, clusters and the exchange");
      if (s["form"].get<int>() >= 0 &&
          (s["form"].get<int>() &
           (sampling::kFormPushZeroLean | sampling::kFormEndsWithHeader |
            sampling::kFormKeys2Rounds | sampling::kFormOwnerEarly | sampling::kFormEndRelaxed)) &&
          !(s["form"].get<int>() & sampling::kFormDigit3Push))
        return Status::InvalidArgument(
            "sampling: form bits kFormPushZeroLean, kFormEndsWithHeader, kFormKeys2Rounds, "
            "kFormOwnerEarly and kFormEndRelaxed need kFormDigit3Push");
      return Status::Ok();
    };
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DType = {};\n  static constexpr int kInput = {};\n"
          "  static constexpr int kFilter = {};\n  static constexpr int kOutput = {};\n"
          "  static constexpr int kThreads = {};\n  static constexpr int kVec = {};\n"
          "  static constexpr bool kKeysAreLogits = {};\n"
          "  static constexpr int kCluster = {};\n  static constexpr int kMinBlocks = {};\n"
          "  static constexpr bool kCache = {};\n  static constexpr bool kCandidates = {};\n"
          "  static constexpr bool kStamps = {};\n  static constexpr bool kFastScan = {};\n"
          "  static constexpr bool kExactPrefix = {};\n  static constexpr bool kWarpScan = {};\n"
          "  static constexpr int kForm = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()),
          IndexOf(kInputs, 2, s["input"].get<std::string>()),
          IndexOf(kFilters, 6, s["filter"].get<std::string>()),
          IndexOf(kOutputs, 3, s["output"].get<std::string>()), s["threads"].get<int>(),
          s["vec"].get<int>(), s["output"].get<std::string>() == "mask", s["cluster"].get<int>(),
          // One block per SM for every variant: the chooser splits rows only while the blocks
          // do not outnumber half the SMs, and a 64-register cap for two blocks per SM made the
          // pipelined passes of cluster variants spill. Except the two-pass top-p kernel in
          // 256-thread blocks of one row each: the chooser runs it for more rows than SMs, two
          // rows per SM, with the same 128 registers per thread as a 512-thread block.
          s["candidates"].get<bool>() && s["threads"].get<int>() == 256 &&
                  s["cluster"].get<int>() == 1
              ? 2
              : 1,
          s["cache"].get<bool>(), s["candidates"].get<bool>(), s["stamps"].get<bool>(),
          s["fast_scan"].get<bool>(), s["exact_prefix"].get<bool>(), s["warp_scan"].get<bool>(),
          s["form"].get<int>());
    };
    return f;
  }();
  return &f;
}

const spec::OpFamily* SpeculativeFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "chain_speculative";
    f.doc = "Chain speculative sampling: accept draft tokens, resample the first rejection";
    f.header = "sampling/speculative.cuh";
    f.fields = {
        // The op launches at most 512 threads (two rows per access: 1024 would spill 384 B).
        spec::IntField("threads", {32, 64, 128, 256, 512, 1024}, 512, "t", "threads per row"),
        spec::IntField("vec", {1, 2, 4}, 4, "v", "elements per vector access"),
    };
    f.entries = {{"flashjit_chain_speculative", "flashjit::sampling::chain_speculative",
                  "flashjit::sampling::SpeculativeParams", "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DType = float;\n  static constexpr int kThreads = {};\n"
          "  static constexpr int kVec = {};\n  static constexpr bool kKeysAreLogits = false;\n",
          s["threads"].get<int>(), s["vec"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(SamplingFamily);
FLASHJIT_REGISTER_FAMILY(SpeculativeFamily);

}  // namespace

Result<VariantSpec> SamplingSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "sampling"},
                                     {"input", kInputs[static_cast<int>(input)]},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"filter", kFilters[static_cast<int>(filter)]},
                                     {"output", kOutputs[static_cast<int>(output)]},
                                     {"threads", threads},
                                     {"vec", vec},
                                     {"cluster", cluster},
                                     {"cache", cache != 0},
                                     {"candidates", candidates != 0},
                                     {"stamps", stamps != 0},
                                     {"fast_scan", (fast_scan & 1) != 0},
                                     {"exact_prefix", (fast_scan & 2) != 0},
                                     {"warp_scan", (fast_scan & 4) != 0},
                                     {"form", form}});
}

Result<VariantSpec> SpeculativeSpec::ToVariant() const {
  return SpecFactory::FromJsonValue(
      {{"op", "chain_speculative"}, {"threads", threads}, {"vec", vec}});
}

int ChooseSamplingThreads(int64_t vocab, int vec, int64_t batch) {
  // About eight accesses per thread per pass; a full block for long rows. Many rows share the
  // SMs, so past one row per SM a smaller block lets two rows run on one SM.
  const int64_t accesses = (vocab + vec - 1) / vec;
  int threads = 32;
  while (threads < 1024 && threads * 8 < accesses) threads *= 2;
  if (batch > 160 && threads > 512) threads = 512;
  return threads;
}

SamplingLaunch ChooseSamplingLaunch(int64_t vocab, int vec, int elem_bytes, int64_t batch,
                                    bool clusters_ok, int sms, int cluster, int64_t cache_bytes) {
  // Measured on the H200 (2026-11-29, V = 128256 fp32, docs/perf/sampling.md): every block of
  // a cluster repeats a row's fixed cost (histogram merges, scans, cluster barriers), so rows
  // are split only while the blocks do not outnumber the SMs: 8 blocks per row at B = 1 (top-p
  // 40 us against 87 for one block), 2 at B = 64 (74 us; 4: 110, 8: 131), 1 at B = 256 (2: within
  // 3%, 4 and 8: 1.2-1.8x slower). A slice of at most 64 KB is kept in shared memory while at
  // most two blocks share an SM (B = 1, 8 blocks per row: top-p 40.2 us against 40.9 without);
  // a larger slice is not cached at all: caching 160 KB of B = 64's 256 KB slices cost more
  // than it saved once uncached kernels lost their per-load check (consolidated run, commit
  // 5845f78: top-p 74.3 / 58.7 us cached against 69.6 / 55.2 uncached, top-k 59.0 against
  // 54.5), and with more blocks per SM caching costs occupancy (B = 256 with 2 blocks per
  // row: 259 us against 232).
  SamplingLaunch l;
  const int64_t sm_count = sms > 0 ? sms : 132;
  if (cluster > 0) {
    l.cluster = cluster;
  } else if (clusters_ok && vocab >= 8192) {
    while (l.cluster < 8 && batch * l.cluster * 2 <= sm_count) l.cluster *= 2;
  }
  // Slices are whole vectors; a cluster's blocks past the row's end get empty slices.
  l.chunk = l.cluster == 1 ? vocab : ((vocab + l.cluster - 1) / l.cluster + vec - 1) / vec * vec;
  const int64_t slice_vecs = (l.chunk + vec - 1) / vec;
  if (l.cluster == 1) {
    l.threads = ChooseSamplingThreads(vocab, vec, batch);
  } else {
    l.threads = slice_vecs >= 512 * 4 ? 512 : 256;
  }
  const int64_t vec_bytes = static_cast<int64_t>(vec) * elem_bytes;
  const int64_t slice_bytes = slice_vecs * vec_bytes;
  const int64_t per_sm = (batch * l.cluster + sm_count - 1) / sm_count;
  int64_t cache;
  if (cache_bytes >= 0) {
    cache = std::min(cache_bytes, kSamplingMaxCacheBytes);
  } else if (per_sm <= 2 || slice_bytes <= 16 * 1024) {
    cache = slice_bytes <= kSamplingAutoCacheBytes ? slice_bytes : 0;
  } else {
    cache = 0;
  }
  l.cache_vecs = static_cast<int32_t>(std::min(slice_vecs, cache / vec_bytes));
  return l;
}

// SamplingTuning::candidates -> the two-pass top-p kernel's form (SamplingTopPForm). The default
// (-1) and what the others change, for A/B (docs/perf/sampling.md has each session's figures):
//   0  the radix select over the whole row (three histogram passes and a pick pass)
//   1  the default's forms, never compiled in
//   2  session 4's first two-pass kernel: float weight tests, the draw walked by one thread
//   3  2 with the draw walked by one warp
//   4  session 4's final form: no lane-private window, no lean cluster steps
//   5  the default without the lean cluster steps
//   6  pass 2's candidates in per-lane columns everywhere; 7 the per-warp ballots everywhere
//   8  the default without the cluster exchange (session 5's cluster steps)
//   9  the fast digit scans without the exact prefix (fast_scan 1); 10 session 7's default (3)
//   11 session 6's block scans (fast_scan 0)
//   12 the default's forms chosen at run time (every form's code); 13 the default's forms
//      compiled in at every launch shape (the default: in clusters of 8 and 2)
//   14 13 with digit 3's counts pushed (kFormDigit3Push, session 10) where 13 runs the exchange
//      and the integer digit scans (session 10's default where its form is compiled in)
//   15 14 zeroing only the 64 push words digit 0's scan wrote (kFormPushZeroLean, session 10
//      round 2); 16 15 with digit 2's bounds loaded with the exchange's header
//      (kFormEndsWithHeader); 17 16 with two rounds of keys in flight in digit 2's fill in
//      clusters of at most 4 (kFormKeys2Rounds); each where 14 pushes. The default since round 2:
//      15 in clusters of 8, 17 in clusters of 2 (its push_levers 15)
//   18 as 20 (session 11 call 1's digit-0 merge push, lost and reverted:
//      docs/perf/logs/2026-11-30-s11-sampling/merge0-push.patch); 19 20 with the owner's inputs
//      read early (kFormOwnerEarly: the masses above b0 with the exchange's header, the uniform
//      in its barrier's shadow); 20 session 10 round 2's default (15 in clusters of 8, 17 in
//      clusters of 2); 21 20 with the last cluster barrier arrived relaxed (kFormEndRelaxed); 22
//      21 with the owner's inputs early; 19-22 where 14 pushes (session 11). The default in
//      session 11: 22 (measured in call 2; its push_levers 15 | 96)
// Where the default's rules come from (measured on the H200): SamplingLaneColumns and
// SamplingClusterExchange (sampling_spec.h), the fast scans and the compiled form
// (sampling_run.cc).
constexpr uint8_t kAllFormBits = 0xFF;
constexpr SamplingTopPForm kSamplingTopPForms[24] = {
    // two_pass, bits_mask, lean, window, columns, exchange, fast_scan, compiled, digit3_push,
    // push_levers (kFormPushZeroLean, kFormEndsWithHeader, kFormKeys2Rounds where it pushes)
    {true, kAllFormBits, true, true, -1, true, -1, -1, true, 15 | 96},   // -1 the default
    {false, kAllFormBits, true, true, 0, false, 0, 0, false},            // 0
    {true, kAllFormBits, true, true, -1, true, -1, 0, false},            // 1
    {true, 0, true, true, 0, false, 0, 0, false},                        // 2
    {true, sampling::kFormWarpWalk, true, true, 0, false, 0, 0, false},  // 3
    {true, kAllFormBits, false, false, 0, false, 0, 0, false},           // 4
    {true, kAllFormBits, false, true, 0, false, 0, 0, false},            // 5
    {true, kAllFormBits, true, true, 1, true, -1, 0, false},             // 6
    {true, kAllFormBits, true, true, 0, true, -1, 0, false},             // 7
    {true, kAllFormBits, true, true, -1, false, -1, 0, false},           // 8
    {true, kAllFormBits, true, true, -1, true, 1, 0, false},             // 9
    {true, kAllFormBits, true, true, -1, true, 3, 0, false},             // 10
    {true, kAllFormBits, true, true, -1, true, 0, 0, false},             // 11
    {true, kAllFormBits, true, true, -1, true, -1, 0, false},            // 12
    {true, kAllFormBits, true, true, -1, true, -1, 1, false},            // 13
    {true, kAllFormBits, true, true, -1, true, -1, 1, true},             // 14
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 1},          // 15
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 3},          // 16
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 7},          // 17
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 15},         // 18 (as 20)
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 15 | 32},    // 19
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 15},         // 20
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 15 | 64},    // 21
    {true, kAllFormBits, true, true, -1, true, -1, 1, true, 15 | 96},    // 22
};

const SamplingTopPForm& SamplingTopPFormOf(int candidates) {
  return kSamplingTopPForms[std::clamp(candidates, -1, 22) + 1];
}

bool SamplingLaneColumns(int candidates, int cluster, int64_t batch, int sms) {
  const int8_t columns = SamplingTopPFormOf(candidates).columns;
  if (columns >= 0) return columns == 1;
  return cluster == 2 || (cluster == 1 && batch > (sms > 0 ? sms : 132));
}

bool SamplingClusterExchange(int candidates, int cluster) {
  return cluster >= 2 && SamplingTopPFormOf(candidates).exchange;
}

SamplingTopPChoice ChooseSamplingTopPForm(int candidates, int cluster, int threads, int64_t chunk,
                                          int64_t batch, int sms) {
  const SamplingTopPForm& f = SamplingTopPFormOf(candidates);
  SamplingTopPChoice c;
  c.lane_columns = SamplingLaneColumns(candidates, cluster, batch, sms);
  c.exchange = SamplingClusterExchange(candidates, cluster);
  // The digit scans: the fast scans with the exact prefix (3, session 7), and at digits 2-3
  // scanned in integers by every warp (7, session 8) except in clusters of blocks of fewer than
  // 512 threads (sampling_run.cc has the figures).
  c.fast_scan = f.fast_scan >= 0 ? f.fast_scan : (cluster == 1 || threads >= 512 ? 7 : 3);
  // The lane-private window pays only with more rows than SMs, one block per row, and long
  // slices (sampling_run.cc).
  const bool window = f.window && chunk >= kSamplingLaneWindowMinChunk && cluster == 1 &&
                      batch > (sms > 0 ? sms : 132);
  c.cand_form =
      (sampling::kFormWarpWalk | sampling::kFormBits | (window ? sampling::kFormLaneWindow : 0) |
       (f.lean ? sampling::kFormClusterLean : 0) |
       (c.lane_columns ? sampling::kFormLaneColumns : 0) |
       (c.exchange ? sampling::kFormClusterExchange : 0)) &
      f.bits_mask;
  c.compiled = f.compiled == 1 || (f.compiled == -1 && (cluster == 8 || cluster == 2));
  // Digit 3's counts pushed (kFormDigit3Push): only where the kernel can run it (the exchange,
  // the integer digit scans, the form compiled in: 512-thread blocks in clusters of 8 and 2 for
  // the default). Measured on the H200 (2026-11-30, session 10, docs/perf/sampling.md; b2b, 14
  // against 13 in the same call, two runs): B = 1 x 128256 flat -0.66 / -0.69 us, peaked -0.03 /
  // -0.02; B = 64 x 128256 flat -1.01 / -1.04, peaked +0.18 / +0.27; 64 x 32000 flat -0.90 /
  // -0.87, peaked -0.02 / -0.10. The default takes it there; 13 is session 9's default.
  if (f.digit3_push && c.exchange && c.fast_scan == 7 && c.compiled && cluster >= 2) {
    c.cand_form |= sampling::kFormDigit3Push;
    // Session 10 round 2's levers of the push (15, 16, 17). Measured on the H200 (2026-11-30,
    // session 10 round 2, docs/perf/sampling.md; b2b against 14 in the same call, two runs): the
    // lean zeroing (15) B = 1 x 128256 flat -0.09 / -0.11 us, peaked -0.09 / -0.03; B = 64 flat
    // -0.09 / -0.08. The bounds with the header (16 against 15): B = 1 flat +0.51 / +0.52 (the
    // cluster of 8's kernel spills 390 B instead of 238), B = 64 flat -0.07 / 0.00, peaked -0.14
    // / -0.08. With two rounds of keys (17): B = 64 flat -0.68 / -0.66 against 14, peaked -0.13 /
    // -0.22, 64 x 32000 flat -0.45 / -0.48. Round 2's default: 15 in clusters of 8, 17 in
    // clusters of 2 (push_levers 8: the bounds with the header only in clusters of at most 4).
    // Session 11's levers (docs/perf/sampling.md, session 11 call 2; b2b against 20 = round 2's
    // default in the same call, two runs): the last cluster barrier relaxed (21) B = 1 x 128256
    // flat -0.46 / -0.42 us, B = 64 flat -0.20 / -0.39; the owner's inputs early (19) B = 1 flat
    // -0.31 / -0.26, B = 64 flat -0.25 / -0.42; both (22, the default since session 11): B = 1
    // flat -0.62 / -0.58 (queued 25.34 / 25.18 -> 24.70 / 24.64), peaked -0.48 / -0.48; B = 64
    // flat -0.50 / -0.69, peaked -0.55 / -0.65; 64 x 32000 flat -0.36 / -0.34, peaked -0.41 /
    // -0.35.
    const bool ends = (f.push_levers & 2) && (!(f.push_levers & 8) || cluster <= 4);
    c.cand_form |= ((f.push_levers & 1) ? sampling::kFormPushZeroLean : 0) |
                   (ends ? sampling::kFormEndsWithHeader : 0) |
                   ((f.push_levers & 4) && cluster <= 4 ? sampling::kFormKeys2Rounds : 0) |
                   ((f.push_levers & 32) ? sampling::kFormOwnerEarly : 0) |
                   ((f.push_levers & 64) ? sampling::kFormEndRelaxed : 0);
  }
  return c;
}

int SamplingCandidatesPerWarp(int64_t chunk, int threads, int64_t cache_bytes, bool columns) {
  // A flat row (softmax of logits with std 1, V = 128256) puts about 3% of its elements into the
  // boundary bin; a sixth of the slice leaves room for rows five times flatter.
  // 1024-thread blocks (at most 64 registers) spill the two-pass kernel heavily (NVRTC sm_90a:
  // 776 B against 48 for the radix select): they keep the radix select.
  if (threads > 512) return 0;
  const int64_t warps = std::max(1, threads / 32);
  int64_t per_warp = (chunk / warps / (columns ? 2 : 6) + 31) / 32 * 32;
  per_warp = std::clamp<int64_t>(per_warp, 32, 1024);
  const int64_t room = kSamplingMaxDynamicSmem - (cache_bytes + 15) / 16 * 16;
  per_warp = std::min(per_warp, room / (warps * 8) / 32 * 32);
  return per_warp >= 32 ? static_cast<int>(per_warp) : 0;
}

}  // namespace flashjit::ops
