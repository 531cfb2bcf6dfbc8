// Distribution tests: 1M draws from one row of V = 128 (through `indices`, so every draw has its
// own Philox stream) against the exact filtered-and-renormalised distribution, for every op and
// the edges k = 1, k = V, p -> 0, p = 1, min_p = 0 and 1.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <functional>

#include "tests/gpu/sampling_test_util.h"
#include "tests/reference/sampling_ref.h"

namespace flashjit::test {
namespace {

constexpr int64_t kVocab = 128;
constexpr int64_t kDraws = 1 << 20;

using Launch = std::function<Status(const TensorView& in, const TensorView& samples,
                                    const SamplingOptions& o)>;

// Draws kDraws samples of row `in_host` with `launch` and checks them against `expected`.
void CheckDistribution(const std::string& what, DType dtype, const std::vector<float>& in_host,
                       const std::vector<double>& expected, const Launch& launch, uint64_t seed) {
  DeviceBuffer din = UploadVector(in_host);
  DeviceBuffer didx(kDraws * 4), dout(kDraws * 4), dvalid(kDraws);
  didx.Fill(0);
  dout.Fill(0xFF);
  dvalid.Fill(0xFF);
  SamplingOptions o;
  o.indices = TensorView::Contiguous(didx.data(), DType::kI32, {kDraws});
  o.valid = TensorView::Contiguous(dvalid.data(), DType::kU8, {kDraws});
  o.rng.seed = seed;
  o.rng.offset = 7;
  Status s = launch(TensorView::Contiguous(din.data(), dtype, {1, kVocab}),
                    TensorView::Contiguous(dout.data(), DType::kI32, {kDraws}), o);
  INFO(what << ": " << s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<int32_t> got = DownloadVector<int32_t>(dout, kDraws);
  std::vector<uint8_t> valid = DownloadVector<uint8_t>(dvalid, kDraws);
  std::vector<int64_t> counts(kVocab, 0);
  int64_t out_of_range = 0, invalid = 0;
  for (int64_t i = 0; i < kDraws; ++i) {
    if (got[i] < 0 || got[i] >= kVocab) {
      ++out_of_range;
      continue;
    }
    ++counts[got[i]];
    invalid += valid[i] != 1;
  }
  int dof = 0;
  int64_t impossible = 0;
  const double chi2 = ref::ChiSquare(counts, expected, kDraws, &dof, &impossible);
  INFO(
      fmt::format("{}: chi2 {:.1f} dof {} (bound {:.1f}), impossible {}, out of range {}, "
                  "invalid {}",
                  what, chi2, dof, ChiSquareBound(dof), impossible, out_of_range, invalid));
  CHECK(out_of_range == 0);
  CHECK(invalid == 0);
  CHECK(impossible == 0);
  CHECK(chi2 < ChiSquareBound(dof));
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

}  // namespace
}  // namespace flashjit::test
