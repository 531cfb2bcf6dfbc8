// Distribution tests: 1M draws from one row of V = 128 (through `indices`, so every draw has its
// own Philox stream) against the exact filtered-and-renormalised distribution, for every op and
// the edges k = 1, k = V, p -> 0, p = 1, min_p = 0 and 1.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "tests/gpu/sampling_test_util.h"
#include "tests/reference/sampling_ref.h"

namespace flashjit::test {
namespace {

constexpr int64_t kVocab = 128;
constexpr int64_t kFullDraws = 1 << 20;

// Draws per case: 2^20, or FLASHJIT_SAMPLING_DRAWS (256 .. 2^20) for runs under
// compute-sanitizer, where a million blocks per case take too long. With fewer draws the
// chi-square test is left out (expected counts of rare tokens fall far below 1, where it is not
// valid); the range, validity and impossible-token checks stay.
int64_t Draws() {
  static const int64_t n = [] {
    const char* v = std::getenv("FLASHJIT_SAMPLING_DRAWS");
    if (!v) return kFullDraws;
    const int64_t d = std::atoll(v);
    if (d < 256 || d > kFullDraws) {
      fmt::print("FLASHJIT_SAMPLING_DRAWS={} is outside [256, {}]: using {}\n", v, kFullDraws,
                 kFullDraws);
      return kFullDraws;
    }
    fmt::print("sampling distribution tests: {} draws per case, chi-square left out\n", d);
    return d;
  }();
  return n;
}

using Launch = std::function<Status(const TensorView& in, const TensorView& samples,
                                    const SamplingOptions& o)>;

// Draws Draws() samples of the row in `din` (`dtype`, expected.size() elements) with `launch`,
// split over `tuning`, and checks them against `expected`.
void CheckDistribution(const std::string& what, DType dtype, const DeviceBuffer& din,
                       const std::vector<double>& expected, const Launch& launch, uint64_t seed,
                       const SamplingTuning& tuning = {}) {
  const int64_t vocab = static_cast<int64_t>(expected.size());
  const int64_t draws = Draws();
  DeviceBuffer didx(draws * 4), dout(draws * 4), dvalid(draws);
  didx.Fill(0);
  dout.Fill(0xFF);
  dvalid.Fill(0xFF);
  SamplingOptions o;
  o.indices = TensorView::Contiguous(didx.data(), DType::kI32, {draws});
  o.valid = TensorView::Contiguous(dvalid.data(), DType::kU8, {draws});
  o.rng.seed = seed;
  o.rng.offset = 7;
  o.tuning = tuning;
  Status s = launch(TensorView::Contiguous(din.data(), dtype, {1, vocab}),
                    TensorView::Contiguous(dout.data(), DType::kI32, {draws}), o);
  INFO(fmt::format("{} (cluster {}, cache {}, threads {}): {}", what, tuning.cluster,
                   tuning.cache_bytes, tuning.threads, s.ToString()));
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<int32_t> got = DownloadVector<int32_t>(dout, draws);
  std::vector<uint8_t> valid = DownloadVector<uint8_t>(dvalid, draws);
  std::vector<int64_t> counts(vocab, 0);
  int64_t out_of_range = 0, invalid = 0;
  for (int64_t i = 0; i < draws; ++i) {
    if (got[i] < 0 || got[i] >= vocab) {
      ++out_of_range;
      continue;
    }
    ++counts[got[i]];
    invalid += valid[i] != 1;
  }
  int dof = 0;
  int64_t impossible = 0;
  const double chi2 = ref::ChiSquare(counts, expected, draws, &dof, &impossible);
  INFO(
      fmt::format("{}: chi2 {:.1f} dof {} (bound {:.1f}), impossible {}, out of range {}, "
                  "invalid {}",
                  what, chi2, dof, ChiSquareBound(dof), impossible, out_of_range, invalid));
  CHECK(out_of_range == 0);
  CHECK(invalid == 0);
  CHECK(impossible == 0);
  if (draws == kFullDraws) CHECK(chi2 < ChiSquareBound(dof));
}

void CheckDistribution(const std::string& what, DType dtype, const std::vector<float>& in_host,
                       const std::vector<double>& expected, const Launch& launch, uint64_t seed,
                       const SamplingTuning& tuning = {}) {
  CheckDistribution(what, dtype, UploadVector(in_host), expected, launch, seed, tuning);
}

TEST_CASE("sampling ops draw from the exact filtered distribution", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  Engine& e = TestEngine();
  const uint64_t seed = rng();
  // A peaked row, and a row with a tie at the top-k / top-p boundary.
  std::vector<float> probs = RandomProbs(kVocab, rng, 2.f);
  std::vector<float> tied = RandomProbs(kVocab, rng, 1.f);
  for (int i = 0; i < 6; ++i) tied[10 + i] = 0.05f;  // six equal, largest-ish values
  for (const auto& row : {probs, tied}) {
    const std::vector<double> w = ref::SanitizeProbs(row);
    auto expect = [&](ref::Filter f, int k, double p, float min_p) {
      return ref::FilteredDistribution(w, f, k, p, min_p);
    };
    CheckDistribution(
        "sampling_from_probs", DType::kF32, row, expect(ref::Filter::kNone, 0, 1, 0),
        [&](auto& in, auto& out, auto& o) { return SamplingFromProbs(e, in, out, o); }, seed);
    for (int k : {1, 3, 12, 50, static_cast<int>(kVocab)})
      CheckDistribution(
          fmt::format("top_k {}", k), DType::kF32, row, expect(ref::Filter::kTopK, k, 1, 0),
          [&](auto& in, auto& out, auto& o) { return TopKSamplingFromProbs(e, in, out, k, {}, o); },
          seed + k);
    for (float p : {1e-7f, 0.3f, 0.9f, 1.f})
      CheckDistribution(
          fmt::format("top_p {}", p), DType::kF32, row, expect(ref::Filter::kTopP, 0, p, 0),
          [&](auto& in, auto& out, auto& o) { return TopPSamplingFromProbs(e, in, out, p, {}, o); },
          seed + 100);
    for (float mp : {0.f, 0.05f, 0.3f, 1.f})
      CheckDistribution(
          fmt::format("min_p {}", mp), DType::kF32, row, expect(ref::Filter::kMinP, 0, 1, mp),
          [&](auto& in, auto& out, auto& o) {
            return MinPSamplingFromProbs(e, in, out, mp, {}, o);
          },
          seed + 200);
    for (auto [k, p] : {std::pair{10, 0.5f}, std::pair{40, 0.9f}, std::pair{1, 1.f},
                        std::pair{static_cast<int>(kVocab), 1.f}}) {
      for (FilterApplyOrder order : {FilterApplyOrder::kJoint, FilterApplyOrder::kTopKFirst}) {
        const bool joint = order == FilterApplyOrder::kJoint;
        CheckDistribution(
            fmt::format("top_k_top_p {} {} {}", k, p, joint ? "joint" : "k-first"), DType::kF32,
            row, expect(joint ? ref::Filter::kJoint : ref::Filter::kTopKFirst, k, p, 0),
            [&](auto& in, auto& out, auto& o) {
              return TopKTopPSamplingFromProbs(e, in, out, k, {}, p, {}, order, o);
            },
            seed + 300);
      }
    }
  }
  // From logits: softmax in the kernel, then the same filters.
  std::vector<float> logits = RandomNormal(kVocab, rng, 2.f);
  std::vector<double> ld(logits.begin(), logits.end());
  const std::vector<double> w = ref::Softmax(ld, 1.0);
  CheckDistribution(
      "sampling_from_logits", DType::kF32, logits,
      ref::FilteredDistribution(w, ref::Filter::kNone, 0, 1, 0),
      [&](auto& in, auto& out, auto& o) { return SamplingFromLogits(e, in, out, o); }, seed + 400);
  for (FilterApplyOrder order : {FilterApplyOrder::kJoint, FilterApplyOrder::kTopKFirst}) {
    const bool joint = order == FilterApplyOrder::kJoint;
    CheckDistribution(
        fmt::format("top_k_top_p_from_logits 20 0.8 {}", joint ? "joint" : "k-first"), DType::kF32,
        logits,
        ref::FilteredDistribution(w, joint ? ref::Filter::kJoint : ref::Filter::kTopKFirst, 20, 0.8,
                                  0),
        [&](auto& in, auto& out, auto& o) {
          return TopKTopPSamplingFromLogits(e, in, out, 20, {}, 0.8f, {}, order, o);
        },
        seed + 500);
  }
}

// fp16 / bf16 logits: the reference is the softmax of the rounded logits, in fp64.
TEST_CASE("sampling from fp16 / bf16 logits draws from the exact distribution", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  Engine& e = TestEngine();
  const uint64_t seed = rng();
  std::vector<float> logits = RandomNormal(kVocab, rng, 2.f);
  logits[17] = logits[90];  // a tie
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    std::vector<double> rounded;
    DeviceBuffer din = Upload16(dtype, logits, &rounded);
    const std::vector<double> w = ref::Softmax(rounded, 1.0);
    const std::string name(DTypeName(dtype));
    CheckDistribution(
        "sampling_from_logits " + name, dtype, din,
        ref::FilteredDistribution(w, ref::Filter::kNone, 0, 1, 0),
        [&](auto& in, auto& out, auto& o) { return SamplingFromLogits(e, in, out, o); }, seed);
    for (auto [k, p] : {std::pair{20, 0.8f}, std::pair{1, 1.f}, std::pair{128, 0.3f}}) {
      for (FilterApplyOrder order : {FilterApplyOrder::kJoint, FilterApplyOrder::kTopKFirst}) {
        const bool joint = order == FilterApplyOrder::kJoint;
        CheckDistribution(
            fmt::format("top_k_top_p_from_logits {} {} {} {}", name, k, p,
                        joint ? "joint" : "k-first"),
            dtype, din,
            ref::FilteredDistribution(w, joint ? ref::Filter::kJoint : ref::Filter::kTopKFirst, k,
                                      p, 0),
            [&](auto& in, auto& out, auto& o) {
              return TopKTopPSamplingFromLogits(e, in, out, k, {}, p, {}, order, o);
            },
            seed + k);
      }
    }
  }
}

// Rows split over a cluster of blocks (distributed-shared-memory histograms, a cluster-wide
// draw), with the slice cached whole, in part, or not at all; V = 128 (slices shorter than one
// step of the block) and V = 40000 (slices of several tiles).
TEST_CASE("cluster-split rows draw from the exact filtered distribution", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  Engine& e = TestEngine();
  const uint64_t seed = rng();
  for (int64_t vocab : {kVocab, int64_t{40000}}) {
    std::vector<float> row = RandomProbs(vocab, rng, vocab == kVocab ? 2.f : 3.f);
    for (int i = 0; i < 4; ++i) row[vocab / 3 + i * (vocab / 5)] = row[vocab / 2];  // ties
    const std::vector<double> w = ref::SanitizeProbs(row);
    DeviceBuffer din = UploadVector(row);
    std::vector<float> logits = RandomNormal(vocab, rng, 2.f);
    std::vector<double> lrounded;
    DeviceBuffer dlogits = Upload16(DType::kBF16, logits, &lrounded);
    const std::vector<double> lw = ref::Softmax(lrounded, 1.0);
    const bool small = vocab == kVocab;
    const int k_big = small ? 50 : 200;
    for (SamplingTuning t : {SamplingTuning{8, -1}, SamplingTuning{2, 32}, SamplingTuning{4, 0},
                             SamplingTuning{1, 0}}) {
      auto expect = [&](ref::Filter f, int k, double p, float min_p) {
        return ref::FilteredDistribution(w, f, k, p, min_p);
      };
      // Unfiltered draws over 40000 tokens would leave most expected counts far below 1, where
      // chi-square is unreliable: large rows only use filters that keep a few hundred tokens.
      if (small)
        CheckDistribution(
            "sampling_from_probs", DType::kF32, din, expect(ref::Filter::kNone, 0, 1, 0),
            [&](auto& in, auto& out, auto& o) { return SamplingFromProbs(e, in, out, o); }, seed,
            t);
      for (int k : {1, k_big})
        CheckDistribution(
            fmt::format("top_k {}", k), DType::kF32, din, expect(ref::Filter::kTopK, k, 1, 0),
            [&](auto& in, auto& out, auto& o) {
              return TopKSamplingFromProbs(e, in, out, k, {}, o);
            },
            seed + k, t);
      for (float p : {1e-7f, 0.5f, 1.f}) {
        if (p == 1.f && !small) continue;
        CheckDistribution(
            fmt::format("top_p {}", p), DType::kF32, din, expect(ref::Filter::kTopP, 0, p, 0),
            [&](auto& in, auto& out, auto& o) {
              return TopPSamplingFromProbs(e, in, out, p, {}, o);
            },
            seed + 100, t);
      }
      CheckDistribution(
          "min_p 0.05", DType::kF32, din, expect(ref::Filter::kMinP, 0, 1, 0.05f),
          [&](auto& in, auto& out, auto& o) {
            return MinPSamplingFromProbs(e, in, out, 0.05f, {}, o);
          },
          seed + 200, t);
      CheckDistribution(
          "top_k_top_p joint", DType::kF32, din, expect(ref::Filter::kJoint, k_big, 0.5, 0),
          [&](auto& in, auto& out, auto& o) {
            return TopKTopPSamplingFromProbs(e, in, out, k_big, {}, 0.5f, {},
                                             FilterApplyOrder::kJoint, o);
          },
          seed + 300, t);
      CheckDistribution(
          "top_k_top_p_from_logits bf16 k-first", DType::kBF16, dlogits,
          ref::FilteredDistribution(lw, ref::Filter::kTopKFirst, k_big, 0.8, 0),
          [&](auto& in, auto& out, auto& o) {
            return TopKTopPSamplingFromLogits(e, in, out, k_big, {}, 0.8f, {},
                                              FilterApplyOrder::kTopKFirst, o);
          },
          seed + 500, t);
    }
  }
}

// Top-p sampling has two kernels: two passes with the boundary bin refined in shared memory
// (the default) and the radix select over the whole slice (options.tuning.candidates = 0).
// Both on an ordinary row (the two-pass kernel also in its A/B forms, candidates 2 to 5: the
// passes as first written, the draw walked by one thread or one warp, session 4's final form
// without pass 1's lane-private window and the lean cluster steps, and the default without the
// latter) and on the same row scaled into subnormal numbers (outside the window); and the
// two-pass kernel on nearly uniform rows, whose boundary bin (key bits 30..20) holds most of the
// row and overflows the candidate regions: it must fall back to the radix select over the slice
// and still draw exactly. One block per row (with the window: 2^20 rows, more than SMs) runs in
// 256-thread blocks (two rows per SM, the default there) and, for the default form, in
// 512-thread ones; clusters of 8 and 2 (no window) run the lean cluster steps. Pass 2's
// per-lane candidate columns (candidates 6; the default's with clusters of 2 and one block per
// row) on the ordinary, nearly uniform and tiny rows and on a row that overflows one lane's
// column while its warp's region holds it; the per-warp ballots everywhere (7) on the ordinary
// and the lane-skewed row. Clusters run the cluster exchange by default (session 6: digits 2-3
// and the draw over every block's candidates in every block; with an overflow, as the nearly
// uniform row, the merged digits over the slices); candidates 8 is the default without it, on
// the ordinary, nearly uniform and lane-skewed rows.
TEST_CASE("top-p: both kernels, and candidate overflow, draw from the exact distribution",
          "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  Engine& e = TestEngine();
  const uint64_t seed = rng();
  const int64_t vocab = 40000;
  std::vector<float> ordinary = RandomProbs(vocab, rng, 3.f);
  for (int i = 0; i < 4; ++i) ordinary[vocab / 3 + i * (vocab / 5)] = ordinary[vocab / 2];
  // Nearly uniform: weights in [1, 1.05) (one or two bins), ties, a few zeros, scaled to sum 1.
  std::uniform_real_distribution<float> near_one(1.f, 1.05f);
  std::vector<float> uniform(vocab);
  for (float& x : uniform) x = near_one(rng);
  for (int i = 0; i < 50; ++i) uniform[i * 797] = uniform[7];
  for (int i = 0; i < 20; ++i) uniform[i * 1999 + 3] = 0.f;
  double sum = 0;
  for (float x : uniform) sum += x;
  for (float& x : uniform) x = static_cast<float>(x / sum);
  // Tiny: the ordinary row times 2^-115, most weights subnormal (exponent field 0: a significand
  // without its implicit bit in the bin masses), the largest normal.
  std::vector<float> tiny(vocab);
  for (int64_t i = 0; i < vocab; ++i) tiny[i] = std::ldexp(ordinary[i], -115);
  // Lane-skewed: the 4 elements of every 256th vector in [1, 1.05) x 2^-8 (one bin, the top one,
  // 62.5 % of the mass; a few exact ties), the rest a flat row scaled to the other 37.5 %. The
  // boundary bin at p = 0.6 is the heavy one, and all of a slice's heavy vectors fall to one
  // thread (or two, in 512-thread blocks): 20 elements for that thread in clusters of 8 (5000-
  // element slices), 40 in clusters of 2, 156 or 78 with one block per row: past its per-lane
  // column (10, 20, 32 entries: tuning.candidates 6 overflows everywhere, the default with
  // clusters of 2 and one block per row), well within its warp's region (the ballots keep them:
  // 7 everywhere, the default in clusters of 8).
  std::vector<float> skewed = RandomProbs(vocab, rng, 1.f);
  for (int64_t i = 0; i < vocab; ++i)
    skewed[i] = (i / 4) % 256 == 0 ? std::ldexp(near_one(rng), -8) : skewed[i] * 0.375f;
  for (int i = 1; i < 6; ++i) skewed[i * 1024 * 5 + 1] = skewed[2];
  struct Case {
    const char* name;
    const std::vector<float>* row;
    float p;
    int candidates;
  };
  for (const Case& c :
       {Case{"ordinary, radix select", &ordinary, 0.5f, 0},
        Case{"ordinary, two passes", &ordinary, 0.5f, 1},
        Case{"ordinary, two passes as first written", &ordinary, 0.5f, 2},
        Case{"ordinary, two passes, first form with one-warp walk", &ordinary, 0.5f, 3},
        Case{"ordinary, two passes, session 4's final form", &ordinary, 0.5f, 4},
        Case{"ordinary, two passes without the lean cluster steps", &ordinary, 0.5f, 5},
        Case{"nearly uniform, two passes as first written (overflow)", &uniform, 0.6f, 2},
        Case{"nearly uniform, two passes (overflow)", &uniform, 0.6f, 1},
        Case{"nearly uniform, radix select", &uniform, 0.6f, 0},
        Case{"tiny (subnormal), two passes", &tiny, 0.5f, 1},
        Case{"tiny (subnormal), radix select", &tiny, 0.5f, 0},
        Case{"ordinary, two passes in per-lane columns", &ordinary, 0.5f, 6},
        Case{"nearly uniform, per-lane columns (overflow)", &uniform, 0.6f, 6},
        Case{"tiny (subnormal), per-lane columns", &tiny, 0.5f, 6},
        Case{"lane-skewed, two passes", &skewed, 0.6f, 1},
        Case{"lane-skewed, per-lane columns (a column overflows)", &skewed, 0.6f, 6},
        Case{"ordinary, two passes with the ballots everywhere", &ordinary, 0.5f, 7},
        Case{"lane-skewed, the ballots everywhere", &skewed, 0.6f, 7},
        Case{"ordinary, two passes without the cluster exchange", &ordinary, 0.5f, 8},
        Case{"nearly uniform, without the cluster exchange (overflow)", &uniform, 0.6f, 8},
        Case{"lane-skewed, without the cluster exchange", &skewed, 0.6f, 8}}) {
    const std::vector<double> w = ref::SanitizeProbs(*c.row);
    DeviceBuffer din = UploadVector(*c.row);
    for (SamplingTuning t : {SamplingTuning{8, -1}, SamplingTuning{2, 0}, SamplingTuning{1, 0},
                             SamplingTuning{1, 0, -1, 512}}) {
      if (t.threads == 512 && c.candidates != 1 && c.candidates != 6) continue;
      t.candidates = c.candidates;
      CheckDistribution(
          fmt::format("top_p {} {}", c.p, c.name), DType::kF32, din,
          ref::FilteredDistribution(w, ref::Filter::kTopP, 0, c.p, 0),
          [&](auto& in, auto& out, auto& o) {
            return TopPSamplingFromProbs(e, in, out, c.p, {}, o);
          },
          seed + 600, t);
    }
  }
}

}  // namespace
}  // namespace flashjit::test
