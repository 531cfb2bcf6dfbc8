// Every bad argument of the sampling ops returns InvalidArgument naming it, before any kernel is
// built or launched (a dry-run engine with no cache: a launch would show as a compile).
#include <flashjit/sampling.h>

#include <catch2/catch.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "sampling/sampling_params.cuh"
#include "src/cache/kernel_db.h"
#include "src/ops/sampling/sampling_spec.h"
#include "tests/unit/test_util.h"

namespace flashjit::test {
namespace {

struct Fixture {
  std::shared_ptr<Engine> engine = MakeTestEngine("");
  std::vector<float> host = std::vector<float>(4 * 1000, 0.001f);
  std::vector<int32_t> ints = std::vector<int32_t>(64, 0);
  TensorView probs = TensorView::Contiguous(host.data(), DType::kF32, {4, 1000});
  TensorView samples = TensorView::Contiguous(ints.data(), DType::kI32, {4});
  TensorView out = TensorView::Contiguous(host.data(), DType::kF32, {4, 1000});

  void ExpectInvalid(const Status& s, const char* needle) {
    INFO(s.ToString());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains(needle));
    CHECK(engine->stats().compiles == 0);
  }
};

TEST_CASE("sampling ops reject bad k, p and min_p before launch", "[sampling]") {
  Fixture f;
  Engine& e = *f.engine;
  for (int k : {0, -3, 1001})
    f.ExpectInvalid(TopKSamplingFromProbs(e, f.probs, f.samples, k), "top_k");
  f.ExpectInvalid(TopKRenormProbs(e, f.probs, f.out, 0), "top_k");
  f.ExpectInvalid(TopKMaskLogits(e, f.probs, f.out, 1001), "top_k");
  for (float p : {0.f, -0.1f, 1.5f, std::numeric_limits<float>::quiet_NaN()})
    f.ExpectInvalid(TopPSamplingFromProbs(e, f.probs, f.samples, p), "top_p");
  f.ExpectInvalid(TopPRenormProbs(e, f.probs, f.out, 2.f), "top_p");
  f.ExpectInvalid(MinPSamplingFromProbs(e, f.probs, f.samples, 1.5f), "min_p");
  f.ExpectInvalid(TopKTopPSamplingFromProbs(e, f.probs, f.samples, 5, {}, 0.f, {}), "top_p");
  f.ExpectInvalid(TopKTopPSamplingFromLogits(e, f.probs, f.samples, 0, {}, 0.5f, {}), "top_k");
  f.ExpectInvalid(Softmax(e, f.probs, f.out, 0.f), "temperature");
  f.ExpectInvalid(Softmax(e, f.probs, f.out, std::numeric_limits<float>::infinity()),
                  "temperature");
}

TEST_CASE("sampling ops reject shape, dtype and device mismatches before launch", "[sampling]") {
  Fixture f;
  Engine& e = *f.engine;
  TensorView bf16 = f.probs;
  bf16.dtype = DType::kBF16;
  f.ExpectInvalid(SamplingFromProbs(e, bf16, f.samples), "probs");
  TensorView one_d = TensorView::Contiguous(f.host.data(), DType::kF32, {4000});
  f.ExpectInvalid(SamplingFromProbs(e, one_d, f.samples), "probs");
  TensorView short_samples = TensorView::Contiguous(f.ints.data(), DType::kI32, {3});
  f.ExpectInvalid(SamplingFromProbs(e, f.probs, short_samples), "samples");
  TensorView i64_samples = TensorView::Contiguous(f.ints.data(), DType::kI64, {4});
  f.ExpectInvalid(SamplingFromProbs(e, f.probs, i64_samples), "samples");
  TensorView other_device = f.samples;
  other_device.device = 1;
  f.ExpectInvalid(SamplingFromProbs(e, f.probs, other_device), "samples: on cuda:1");
  TensorView strided = f.probs;
  strided.strides[1] = 2;
  f.ExpectInvalid(TopPSamplingFromProbs(e, strided, f.samples, 0.9f), "probs");
  TensorView wrong_vocab = TensorView::Contiguous(f.host.data(), DType::kF32, {4, 999});
  f.ExpectInvalid(TopKRenormProbs(e, f.probs, wrong_vocab, 5), "out");
  TensorView f16_out = f.out;
  f16_out.dtype = DType::kF16;
  f.ExpectInvalid(TopKMaskLogits(e, f.probs, f16_out, 5), "out");
  f.ExpectInvalid(Softmax(e, f.probs, f16_out), "out");
  TensorView huge = TensorView::Contiguous(f.host.data(), DType::kF32, {1, (1 << 20) + 4});
  TensorView one_sample = TensorView::Contiguous(f.ints.data(), DType::kI32, {1});
  f.ExpectInvalid(SamplingFromProbs(e, huge, one_sample), "2^20 tokens");
  // Per-row tensors: right length and dtype.
  TensorView k_short = TensorView::Contiguous(f.ints.data(), DType::kI32, {3});
  f.ExpectInvalid(TopKSamplingFromProbs(e, f.probs, f.samples, 0, k_short), "top_k_arr");
  TensorView p_int = TensorView::Contiguous(f.ints.data(), DType::kI32, {4});
  f.ExpectInvalid(TopPSamplingFromProbs(e, f.probs, f.samples, 0.f, p_int), "top_p_arr");
  // Indices: the batch is their length.
  SamplingOptions o;
  o.indices = TensorView::Contiguous(f.ints.data(), DType::kI32, {6});
  f.ExpectInvalid(SamplingFromProbs(e, f.probs, f.samples, o), "samples");
  o.indices = TensorView::Contiguous(f.host.data(), DType::kF32, {4});
  f.ExpectInvalid(SamplingFromProbs(e, f.probs, f.samples, o), "indices");
  SamplingOptions v;
  v.valid = TensorView::Contiguous(f.ints.data(), DType::kU8, {5});
  f.ExpectInvalid(SamplingFromProbs(e, f.probs, f.samples, v), "valid");
  // Speculative: n + 1 target distributions.
  TensorView draft = TensorView::Contiguous(f.host.data(), DType::kF32, {2, 2, 1000});
  TensorView ids = TensorView::Contiguous(f.ints.data(), DType::kI32, {2, 2});
  TensorView target_short = TensorView::Contiguous(f.host.data(), DType::kF32, {2, 2, 1000});
  TensorView outs = TensorView::Contiguous(f.ints.data(), DType::kI32, {2, 3});
  f.ExpectInvalid(ChainSpeculativeSampling(e, draft, ids, target_short, outs), "target_probs");
  TensorView target = TensorView::Contiguous(f.host.data(), DType::kF32, {2, 3, 1000});
  TensorView outs_short = TensorView::Contiguous(f.ints.data(), DType::kI32, {2, 2});
  f.ExpectInvalid(ChainSpeculativeSampling(e, draft, ids, target, outs_short), "output_token_ids");
}

TEST_CASE("a valid sampling call passes validation and builds its kernel", "[sampling]") {
  Fixture f;
  Status s = TopPSamplingFromProbs(*f.engine, f.probs, f.samples, 0.9f);
  INFO(s.ToString());
  CHECK(s.ok());
  CHECK(f.engine->stats().compiles == 1);
}

TEST_CASE("sampling tuning overrides are checked before launch", "[sampling]") {
  Fixture f;
  Engine& e = *f.engine;
  for (int c : {-1, 3, 16}) {
    SamplingOptions o;
    o.tuning.cluster = c;
    f.ExpectInvalid(SamplingFromProbs(e, f.probs, f.samples, o), "options.tuning.cluster");
  }
  for (int64_t bytes : {int64_t{-2}, int64_t{1} << 20}) {
    SamplingOptions o;
    o.tuning.cache_bytes = bytes;
    f.ExpectInvalid(TopPSamplingFromProbs(e, f.probs, f.samples, 0.9f, {}, o),
                    "options.tuning.cache_bytes");
  }
  for (int c : {-2, 23}) {
    SamplingOptions o;
    o.tuning.candidates = c;
    f.ExpectInvalid(TopPSamplingFromProbs(e, f.probs, f.samples, 0.9f, {}, o),
                    "options.tuning.candidates");
  }
  for (int t : {-1, 16, 48, 2048}) {
    SamplingOptions o;
    o.tuning.threads = t;
    f.ExpectInvalid(TopPSamplingFromProbs(e, f.probs, f.samples, 0.9f, {}, o),
                    "options.tuning.threads");
  }
  {
    SamplingOptions o;
    o.tuning.cluster = 2;
    o.tuning.threads = 128;
    f.ExpectInvalid(TopPSamplingFromProbs(e, f.probs, f.samples, 0.9f, {}, o),
                    "options.tuning.threads");
  }
  SamplingOptions o;
  o.tuning = {8, 0};
  Status s = TopPSamplingFromProbs(e, f.probs, f.samples, 0.9f, {}, o);
  INFO(s.ToString());
  CHECK(s.ok());
  CHECK(e.stats().compiles == 1);
}

TEST_CASE("sampling launch choice: clusters and slice caches on sm_90", "[sampling]") {
  using ops::ChooseSamplingLaunch;
  // B = 1, V = 128256 fp32: 8 blocks per row, 64 KB slices kept in shared memory.
  ops::SamplingLaunch l = ChooseSamplingLaunch(128256, 4, 4, 1, true, 132, 0, -1);
  CHECK(l.cluster == 8);
  CHECK(l.chunk == 16032);
  CHECK(l.threads == 512);
  CHECK(l.cache_vecs == 4008);
  // B = 64: 2 blocks per row (128 blocks for 132 SMs); a 256 KB slice is not cached.
  l = ChooseSamplingLaunch(128256, 4, 4, 64, true, 132, 0, -1);
  CHECK(l.cluster == 2);
  CHECK(l.chunk == 64128);
  CHECK(l.threads == 512);
  CHECK(l.cache_vecs == 0);
  // B = 256 covers the SMs with one block per row; two blocks per SM: the row is not cached.
  l = ChooseSamplingLaunch(128256, 4, 4, 256, true, 132, 0, -1);
  CHECK(l.cluster == 1);
  CHECK(l.cache_vecs == 0);
  // Without clusters: one block per row; the 513 KB row is not cached.
  l = ChooseSamplingLaunch(128256, 4, 4, 64, false, 132, 0, -1);
  CHECK(l.cluster == 1);
  CHECK(l.chunk == 128256);
  CHECK(l.cache_vecs == 0);
  // A 32 KB row, one block per row alone on its SM: cached whole.
  l = ChooseSamplingLaunch(8000, 4, 4, 64, false, 132, 0, -1);
  CHECK(l.cluster == 1);
  CHECK(l.cache_vecs == 2000);
  // Small rows stay one block per row, cached whole.
  l = ChooseSamplingLaunch(1000, 4, 4, 64, true, 132, 0, -1);
  CHECK(l.cluster == 1);
  CHECK(l.cache_vecs == 250);
  // Forced: slices of whole vectors cover the row; a partial cache.
  l = ChooseSamplingLaunch(1003, 1, 2, 4, true, 132, 4, 100);
  CHECK(l.cluster == 4);
  CHECK(l.chunk * 4 >= 1003);
  CHECK(l.chunk * 3 < 1003);
  CHECK(l.threads >= 256);
  CHECK(l.cache_vecs == 50);
}

TEST_CASE("sampling: where the two-pass top-p path keeps per-lane candidate columns",
          "[sampling]") {
  using ops::SamplingLaneColumns;
  // The default (-1, 1; 8, 9 and 11 keep it): clusters of 2 (B = 64), one block per row past one
  // row per SM (B = 256).
  for (int c : {-1, 1, 8, 9, 10, 11}) {
    CHECK(SamplingLaneColumns(c, 2, 64, 132));
    CHECK(SamplingLaneColumns(c, 1, 256, 132));
    CHECK(SamplingLaneColumns(c, 1, 200, 0));  // SM count unknown: 132
    CHECK_FALSE(SamplingLaneColumns(c, 1, 100, 132));
    CHECK_FALSE(SamplingLaneColumns(c, 1, 132, 132));
    CHECK_FALSE(SamplingLaneColumns(c, 8, 1, 132));
    CHECK_FALSE(SamplingLaneColumns(c, 4, 16, 132));
  }
  // 6 forces them, 7 and the older forms never take them.
  CHECK(SamplingLaneColumns(6, 8, 1, 132));
  for (int c : {0, 2, 3, 4, 5, 7}) {
    CHECK_FALSE(SamplingLaneColumns(c, 2, 64, 132));
    CHECK_FALSE(SamplingLaneColumns(c, 1, 256, 132));
  }
}

TEST_CASE("sampling: the two-pass top-p kernel's cluster exchange", "[sampling]") {
  using ops::SamplingClusterExchange;
  // The default and the forms built on it (-1, 1, 6, 7, 9, 11): every cluster size; never one
  // block.
  for (int c : {-1, 1, 6, 7, 9, 10, 11}) {
    for (int cluster : {2, 4, 8}) CHECK(SamplingClusterExchange(c, cluster));
    CHECK_FALSE(SamplingClusterExchange(c, 1));
  }
  // 8 (the default without it) and the older forms never.
  for (int c : {0, 2, 3, 4, 5, 8})
    for (int cluster : {1, 2, 4, 8}) CHECK_FALSE(SamplingClusterExchange(c, cluster));
}

// The table of forms (kSamplingTopPForms): the default's kForm* bits and digit scans at the
// benchmark shapes (the cubins `cf6379` at B = 1, `cf7163` at B = 64: digit 3's counts pushed
// since session 10, with round 2's levers and session 11's (the last cluster barrier relaxed, the
// owner's inputs early); one block per row at B = 256 chosen at run time, form 31), and what the
// A/B values change.
TEST_CASE("sampling: the two-pass top-p forms by tuning.candidates", "[sampling]") {
  using ops::ChooseSamplingTopPForm;
  using namespace flashjit::sampling;
  // B = 1 x 128256: clusters of 8 x 512 threads, 16032-element slices.
  ops::SamplingTopPChoice c = ChooseSamplingTopPForm(-1, 8, 512, 16032, 1, 132);
  CHECK(c.cand_form ==
        (43 | kFormDigit3Push | kFormPushZeroLean | kFormOwnerEarly | kFormEndRelaxed));
  CHECK(c.compiled);
  CHECK(c.fast_scan == 7);
  CHECK(c.exchange);
  CHECK_FALSE(c.lane_columns);
  // B = 64: clusters of 2 (lane columns); B = 256: one 256-thread block per row (the window).
  c = ChooseSamplingTopPForm(-1, 2, 512, 64128, 64, 132);
  CHECK(c.cand_form == (59 | kFormDigit3Push | kFormPushZeroLean | kFormEndsWithHeader |
                        kFormKeys2Rounds | kFormOwnerEarly | kFormEndRelaxed));
  CHECK(c.compiled);
  c = ChooseSamplingTopPForm(-1, 1, 256, 128256, 256, 132);
  CHECK(c.cand_form == 31);
  CHECK_FALSE(c.compiled);
  CHECK(c.fast_scan == 7);
  // Clusters of 8 of 256-thread blocks (1 x 32000): the exact prefix without the warp scan.
  CHECK(ChooseSamplingTopPForm(-1, 8, 256, 4000, 1, 132).fast_scan == 3);
  // 1 and 12: the default's forms chosen at run time; 13: compiled in everywhere.
  CHECK(ChooseSamplingTopPForm(1, 8, 512, 16032, 1, 132).cand_form == 43);
  CHECK_FALSE(ChooseSamplingTopPForm(1, 8, 512, 16032, 1, 132).compiled);
  CHECK_FALSE(ChooseSamplingTopPForm(12, 2, 512, 64128, 64, 132).compiled);
  CHECK(ChooseSamplingTopPForm(13, 1, 256, 128256, 256, 132).compiled);
  // 2 and 3: session 4's first kernel (no bits; 3 with the warp walk); 4 and 5 without the lean
  // cluster steps (4 without the window); 8 without the exchange; the scans of 9, 10, 11.
  CHECK(ChooseSamplingTopPForm(2, 8, 512, 16032, 1, 132).cand_form == 0);
  CHECK(ChooseSamplingTopPForm(3, 1, 256, 128256, 256, 132).cand_form == kFormWarpWalk);
  CHECK(ChooseSamplingTopPForm(4, 1, 256, 128256, 256, 132).cand_form ==
        (kFormWarpWalk | kFormBits));
  CHECK(ChooseSamplingTopPForm(5, 1, 256, 128256, 256, 132).cand_form ==
        (kFormWarpWalk | kFormBits | kFormLaneWindow));
  CHECK(ChooseSamplingTopPForm(8, 8, 512, 16032, 1, 132).cand_form == 11);
  CHECK(ChooseSamplingTopPForm(9, 8, 512, 16032, 1, 132).fast_scan == 1);
  CHECK(ChooseSamplingTopPForm(10, 8, 512, 16032, 1, 132).fast_scan == 3);
  CHECK(ChooseSamplingTopPForm(11, 8, 512, 16032, 1, 132).fast_scan == 0);
  // 14: 13 with digit 3's counts pushed, where the kernel runs the exchange and the integer
  // scans (512-thread blocks in clusters); elsewhere 13's form.
  CHECK(ChooseSamplingTopPForm(14, 8, 512, 16032, 1, 132).cand_form == (43 | kFormDigit3Push));
  CHECK(ChooseSamplingTopPForm(14, 2, 512, 64128, 64, 132).cand_form == (59 | kFormDigit3Push));
  CHECK(ChooseSamplingTopPForm(14, 8, 256, 4000, 1, 132).cand_form ==
        ChooseSamplingTopPForm(13, 8, 256, 4000, 1, 132).cand_form);
  CHECK(ChooseSamplingTopPForm(14, 1, 256, 128256, 256, 132).cand_form == 31);
  // 15-17: 14 with session 10 round 2's levers (the lean zeroing; the bounds with the header;
  // two rounds of keys in flight in clusters of at most 4), where 14 pushes; elsewhere 13's.
  constexpr int kPush = kFormDigit3Push;
  CHECK(ChooseSamplingTopPForm(15, 8, 512, 16032, 1, 132).cand_form ==
        (43 | kPush | kFormPushZeroLean));
  CHECK(ChooseSamplingTopPForm(16, 8, 512, 16032, 1, 132).cand_form ==
        (43 | kPush | kFormPushZeroLean | kFormEndsWithHeader));
  CHECK(ChooseSamplingTopPForm(17, 8, 512, 16032, 1, 132).cand_form ==
        (43 | kPush | kFormPushZeroLean | kFormEndsWithHeader));
  CHECK(ChooseSamplingTopPForm(17, 2, 512, 64128, 64, 132).cand_form ==
        (59 | kPush | kFormPushZeroLean | kFormEndsWithHeader | kFormKeys2Rounds));
  CHECK(ChooseSamplingTopPForm(16, 2, 512, 64128, 64, 132).cand_form ==
        (59 | kPush | kFormPushZeroLean | kFormEndsWithHeader));
  CHECK(ChooseSamplingTopPForm(17, 8, 256, 4000, 1, 132).cand_form ==
        ChooseSamplingTopPForm(13, 8, 256, 4000, 1, 132).cand_form);
  CHECK(ChooseSamplingTopPForm(17, 1, 256, 128256, 256, 132).cand_form == 31);
  CHECK(ChooseSamplingTopPForm(13, 8, 512, 16032, 1, 132).cand_form == 43);
  CHECK(ChooseSamplingTopPForm(13, 2, 512, 64128, 64, 132).cand_form == 59);
  // 18: as 20 (session 11 call 1's merge push, reverted); 19: 20 with the owner's inputs read
  // early (session 11), on the default's push form (15 in clusters of 8, 17 in clusters of 2).
  CHECK(ChooseSamplingTopPForm(18, 8, 512, 16032, 1, 132).cand_form ==
        ChooseSamplingTopPForm(20, 8, 512, 16032, 1, 132).cand_form);
  CHECK(ChooseSamplingTopPForm(19, 8, 512, 16032, 1, 132).cand_form ==
        (43 | kPush | kFormPushZeroLean | kFormOwnerEarly));
  CHECK(
      ChooseSamplingTopPForm(19, 2, 512, 64128, 64, 132).cand_form ==
      (59 | kPush | kFormPushZeroLean | kFormEndsWithHeader | kFormKeys2Rounds | kFormOwnerEarly));
  CHECK(ChooseSamplingTopPForm(19, 8, 256, 4000, 1, 132).cand_form ==
        ChooseSamplingTopPForm(13, 8, 256, 4000, 1, 132).cand_form);
  CHECK(ChooseSamplingTopPForm(19, 1, 256, 128256, 256, 132).cand_form == 31);
  // 20: session 10 round 2's default.
  CHECK(ChooseSamplingTopPForm(20, 8, 512, 16032, 1, 132).cand_form ==
        (43 | kPush | kFormPushZeroLean));
  CHECK(ChooseSamplingTopPForm(20, 2, 512, 64128, 64, 132).cand_form ==
        (59 | kPush | kFormPushZeroLean | kFormEndsWithHeader | kFormKeys2Rounds));
  // 21, 22: 20 with the last cluster barrier relaxed; 22 also the owner's inputs early.
  CHECK(ChooseSamplingTopPForm(21, 8, 512, 16032, 1, 132).cand_form ==
        (43 | kPush | kFormPushZeroLean | kFormEndRelaxed));
  CHECK(ChooseSamplingTopPForm(22, 2, 512, 64128, 64, 132).cand_form ==
        (59 | kPush | kFormPushZeroLean | kFormEndsWithHeader | kFormKeys2Rounds | kFormOwnerEarly |
         kFormEndRelaxed));
  CHECK(ChooseSamplingTopPForm(22, 1, 256, 128256, 256, 132).cand_form == 31);
  // Clusters of 4 (every form's code at run time): no push.
  CHECK(ChooseSamplingTopPForm(-1, 4, 512, 32064, 16, 132).cand_form == 43);
  CHECK_FALSE(ops::SamplingTopPFormOf(0).two_pass);
  for (int v = 1; v <= 22; ++v) CHECK(ops::SamplingTopPFormOf(v).two_pass);
}

TEST_CASE("sampling: candidate regions of the two-pass top-p path", "[sampling]") {
  using ops::SamplingCandidatesPerWarp;
  // B = 64: 2 blocks of 512 threads over 64128 elements: a sixth of 4008 per warp, rounded up.
  CHECK(SamplingCandidatesPerWarp(64128, 512, 0) == 672);
  // B = 256: one 512-thread block per row: capped at 1024 per warp (128 KB).
  CHECK(SamplingCandidatesPerWarp(128256, 512, 0) == 1024);
  // B = 1: 8 blocks, 64 KB slices cached: the regions follow the cache.
  CHECK(SamplingCandidatesPerWarp(16032, 512, 64128) == 192);
  // Tiny rows still get 32 per warp.
  CHECK(SamplingCandidatesPerWarp(128, 32, 512) == 32);
  // A 160 KB cache leaves room for 40 KB: 16 warps x 320 entries x 8 bytes.
  CHECK(SamplingCandidatesPerWarp(64128, 512, 163840) == 320);
  // No room at all: 0 (the radix select runs).
  CHECK(SamplingCandidatesPerWarp(64128, 512, ops::kSamplingMaxDynamicSmem) == 0);
  // 1024-thread blocks keep the radix select.
  CHECK(SamplingCandidatesPerWarp(128256, 1024, 0) == 0);
  // Per-lane columns (tuning.candidates 6): half the slice. B = 1: 16032 / 16 / 2 = 501 -> 512
  // per warp, 16 per lane; B = 64: 2004 -> capped at 1024, 32 per lane; B = 1 x 32000 (256
  // threads, 4000-element slices): 250 -> 256, 8 per lane; within the room as before.
  CHECK(SamplingCandidatesPerWarp(16032, 512, 64128, true) == 512);
  CHECK(SamplingCandidatesPerWarp(64128, 512, 0, true) == 1024);
  CHECK(SamplingCandidatesPerWarp(4000, 256, 16000, true) == 256);
  CHECK(SamplingCandidatesPerWarp(64128, 512, 163840, true) == 320);
}

// Engines built for different archs on one device never share the cluster decision: after an
// sm_90a engine split rows over clusters, an sm_80 engine builds one block per row.
TEST_CASE("sampling: the cluster decision follows each engine's arch", "[sampling]") {
  TempDir dir;
  std::vector<float> host(64 * 128256, 1.f / 128256);
  std::vector<int32_t> ints(64, 0);
  const TensorView probs = TensorView::Contiguous(host.data(), DType::kF32, {64, 128256});
  const TensorView samples = TensorView::Contiguous(ints.data(), DType::kI32, {64});
  auto clusters_built = [&](const std::string& arch) {
    EngineOptions o;
    o.read_environment = false;
    o.arch = arch;
    o.dry_run = true;
    o.cache_dir = dir / arch;
    auto e = Engine::Create(o);
    REQUIRE(e.ok());
    const Status s = TopPSamplingFromProbs(**e, probs, samples, 0.9f);
    INFO(s.ToString());
    REQUIRE(s.ok());
    auto db = cache::KernelDb::Open(dir / arch + "/kernels.db", cache::KernelDb::Mode::kReadOnly);
    REQUIRE(db.ok());
    auto rows = (*db)->List();
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    return nlohmann::json::parse(rows->front().spec).at("cluster").get<int>();
  };
  CHECK(clusters_built("sm_90a") == 2);
  CHECK(clusters_built("sm_80") == 1);
  CHECK(clusters_built("sm_90a") == 2);
}

// The two-pass kernel's form compiled into the variant (variant field form, session 8 round 2):
// its bits are in the name and the rendered Variant; -1 (every form, chosen at run time) is the
// default; the field needs the two-pass kernel and stays within the kForm* bits.
TEST_CASE("sampling spec: the compiled-in form", "[sampling]") {
  ops::SamplingSpec s;
  s.filter = ops::SamplingFilter::kTopP;
  s.threads = 512;
  s.cluster = 8;
  s.candidates = 1;
  auto runtime = s.ToVariant();
  REQUIRE(runtime.ok());
  CHECK(runtime->name().find("_cf-1") != std::string::npos);
  s.form = 43;
  auto fixed = s.ToVariant();
  REQUIRE(fixed.ok());
  CHECK(fixed->name().find("_cf43") != std::string::npos);
  CHECK(fixed->canonical_json().find("\"form\":43") != std::string::npos);
  CHECK(!(*fixed == *runtime));
  s.candidates = 0;
  auto no_candidates = s.ToVariant();
  REQUIRE(!no_candidates.ok());
  CHECK(no_candidates.status().message().find("form needs candidates") != std::string::npos);
  s.candidates = 1;
  s.form = 64;
  CHECK(!s.ToVariant().ok());
  // Session 10 round 2's and session 11's levers need the push; the field stops at 4095.
  s.form = 43 | sampling::kFormPushZeroLean;
  auto lever = s.ToVariant();
  REQUIRE(!lever.ok());
  CHECK(lever.status().message().find("need kFormDigit3Push") != std::string::npos);
  s.form = 43 | sampling::kFormOwnerEarly;
  CHECK(!s.ToVariant().ok());
  s.form = 43 | sampling::kFormEndRelaxed;
  CHECK(!s.ToVariant().ok());
  s.form = 8192;
  CHECK(!s.ToVariant().ok());
}

}  // namespace
}  // namespace flashjit::test
