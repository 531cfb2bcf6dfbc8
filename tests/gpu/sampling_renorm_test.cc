// Renorm, mask and softmax against double-precision references, over shapes up to V = 128256,
// with per-row k / p, ties (signed zeros among the mask's), and poisoned outputs.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <limits>

#include "tests/gpu/sampling_test_util.h"
#include "tests/reference/half.h"
#include "tests/reference/sampling_ref.h"

namespace flashjit::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void RunRenorm(bool top_k, int64_t batch, int64_t vocab, std::mt19937& rng) {
  std::vector<float> probs;
  std::vector<int32_t> ks(batch);
  std::vector<float> ps(batch);
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<float> row = RandomProbs(vocab, rng, r % 2 ? 5.f : 1.f);
    if (r == 2 && vocab > 40)
      for (int i = 0; i < 8; ++i) row[30 + i] = row[0];  // ties
    probs.insert(probs.end(), row.begin(), row.end());
    ks[r] = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(1, vocab)(rng));
    if (r == 0) ks[r] = 1;
    if (r == 1) ks[r] = static_cast<int32_t>(vocab);
    ps[r] =
        r == 0 ? 1.f : (r == 1 ? 1e-6f : std::uniform_real_distribution<float>(0.05f, 1.f)(rng));
  }
  DeviceBuffer din = UploadVector(probs), dk = UploadVector(ks), dp = UploadVector(ps);
  DeviceBuffer dout(batch * vocab * 4);
  dout.Fill(0xFF);
  TensorView in = TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab});
  TensorView out = TensorView::Contiguous(dout.data(), DType::kF32, {batch, vocab});
  Status s = top_k ? TopKRenormProbs(TestEngine(), in, out, 0,
                                     TensorView::Contiguous(dk.data(), DType::kI32, {batch}))
                   : TopPRenormProbs(TestEngine(), in, out, 0.f,
                                     TensorView::Contiguous(dp.data(), DType::kF32, {batch}));
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> got = DownloadVector<float>(dout, batch * vocab);
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<float> row(probs.begin() + r * vocab, probs.begin() + (r + 1) * vocab);
    std::vector<double> ref = ref::FilteredDistribution(
        ref::SanitizeProbs(row), top_k ? ref::Filter::kTopK : ref::Filter::kTopP, ks[r], ps[r], 0);
    int64_t wrong_support = 0;
    double max_rel = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      const double g = got[r * vocab + i];
      if ((g == 0) != (ref[i] == 0) || std::isnan(g)) {
        ++wrong_support;
      } else if (ref[i] > 0) {
        max_rel = std::max(max_rel, std::abs(g - ref[i]) / ref[i]);
      }
    }
    INFO(fmt::format("{} renorm row {} of {}x{} (k {}, p {}): wrong support {}, max rel {:.3g}",
                     top_k ? "top-k" : "top-p", r, batch, vocab, ks[r], ps[r], wrong_support,
                     max_rel));
    CHECK(wrong_support == 0);
    CHECK(max_rel < 4e-6);
  }
}

TEST_CASE("top-k / top-p renorm equal the fp64 reference", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  for (int64_t vocab : {128, 1000, 32000, 128256})
    for (bool top_k : {true, false}) RunRenorm(top_k, 6, vocab, rng);
}

void RunMask(DType dtype, int64_t batch, int64_t vocab, std::mt19937& rng) {
  std::vector<float> logits = RandomNormal(batch * vocab, rng, 3.f);
  logits[5] = std::numeric_limits<float>::quiet_NaN();
  logits[7] = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < 5; ++i) logits[vocab + 20 + i] = logits[vocab];  // ties in row 1
  std::vector<int32_t> ks(batch);
  for (auto& k : ks)
    k = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(1, vocab)(rng));
  ks[0] = 1;
  // Row 2: the k-th largest logit is a zero, with -0.0 and +0.0 among the tied zeros. They are the
  // same logit, so every zero is kept (keyed apart, the -0.0s would be dropped).
  if (batch > 2) {
    float* row = logits.data() + 2 * vocab;
    for (int i = 0; i < 16; ++i) row[40 + i] = i % 2 ? 0.f : -0.f;
    int positives = 0;
    for (int64_t i = 0; i < vocab; ++i) positives += row[i] > 0.f;
    ks[2] = positives + 3;
  }
  std::vector<double> held;  // what the device holds
  DeviceBuffer din;
  if (dtype == DType::kF32) {
    din = UploadVector(logits);
    held.assign(logits.begin(), logits.end());
  } else {
    din = Upload16(dtype, logits, &held);
  }
  const int eb = DTypeBytes(dtype);
  DeviceBuffer dk = UploadVector(ks), dout(batch * vocab * eb);
  dout.Fill(0x7F);
  Status s = TopKMaskLogits(TestEngine(), TensorView::Contiguous(din.data(), dtype, {batch, vocab}),
                            TensorView::Contiguous(dout.data(), dtype, {batch, vocab}), 0,
                            TensorView::Contiguous(dk.data(), DType::kI32, {batch}));
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> got = dtype == DType::kF32 ? DownloadVector<float>(dout, batch * vocab)
                                                : Download16(dtype, dout, batch * vocab);
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<double> row(held.begin() + r * vocab, held.begin() + (r + 1) * vocab);
    std::vector<double> ref = ref::TopKMaskLogits(row, ks[r]);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < vocab; ++i)
      mismatches += !(static_cast<double>(got[r * vocab + i]) == ref[i]);
    INFO(fmt::format("mask {} row {} vocab {} k {}: {} mismatches", DTypeName(dtype), r, vocab,
                     ks[r], mismatches));
    CHECK(mismatches == 0);
  }
}

TEST_CASE("top-k mask logits equals the reference exactly", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t vocab : {128, 32000, 128256}) RunMask(dtype, 4, vocab, rng);
}

TEST_CASE("softmax with scalar and per-row temperature matches fp64", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  for (int64_t vocab : {128, 32000, 128256}) {
    const int64_t batch = 5;
    std::vector<float> logits = RandomNormal(batch * vocab, rng, 4.f);
    logits[3] = -std::numeric_limits<float>::infinity();
    std::vector<float> temps = {1.f, 0.5f, 2.f, 0.1f, 7.f};
    DeviceBuffer din = UploadVector(logits), dt = UploadVector(temps), dout(batch * vocab * 4);
    for (bool per_row : {false, true}) {
      dout.Fill(0xFF);
      Status s =
          Softmax(TestEngine(), TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab}),
                  TensorView::Contiguous(dout.data(), DType::kF32, {batch, vocab}), 0.7f,
                  per_row ? TensorView::Contiguous(dt.data(), DType::kF32, {batch}) : TensorView{});
      REQUIRE(s.ok());
      Synchronize();
      if (DryRun()) continue;
      std::vector<float> got = DownloadVector<float>(dout, batch * vocab);
      std::vector<double> ref;
      for (int64_t r = 0; r < batch; ++r) {
        std::vector<double> row(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
        std::vector<double> sm = ref::Softmax(row, per_row ? temps[r] : 0.7);
        ref.insert(ref.end(), sm.begin(), sm.end());
      }
      ErrorStats err = Compare(got, ref);
      INFO(fmt::format("softmax vocab {} per_row {}: {}", vocab, per_row, err.ToString()));
      CHECK(err.non_finite == 0);
      CHECK(err.rel_l2 < 2e-6);
    }
  }
}

}  // namespace
}  // namespace flashjit::test
