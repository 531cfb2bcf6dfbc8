// Sampling on the GPU: bad numbers, determinism, CUDA-graph replay with seed/offset in device
// memory, and chain speculative sampling.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <limits>
#include <vector>

#include "tests/gpu/sampling_test_util.h"
#include "tests/reference/sampling_ref.h"

namespace flashjit::test {
namespace {

// FLASHJIT_SAMPLING_CANDIDATES (a comma-separated list of tuning.candidates values, for the
// sanitizers): only those of `all` in the cases that loop over forms; unset: all of them.
std::vector<int> SelectedCandidates(std::initializer_list<int> all) {
  const char* env = std::getenv("FLASHJIT_SAMPLING_CANDIDATES");
  if (env == nullptr || *env == 0) return std::vector<int>(all);
  std::vector<int> wanted;
  for (const char* p = env; *p;) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p)
      throw std::invalid_argument("FLASHJIT_SAMPLING_CANDIDATES: not a list of integers");
    wanted.push_back(static_cast<int>(v));
    p = *end == ',' ? end + 1 : end;
  }
  std::vector<int> out;
  for (const int c : all)
    for (const int w : wanted)
      if (c == w) out.push_back(c);
  return out;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST_CASE("bad rows give in-range tokens and a cleared valid flag", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  Engine& e = TestEngine();
  for (int64_t vocab : {128, 32000}) {
    const int64_t batch = 8;
    std::vector<float> probs;
    for (int64_t r = 0; r < batch; ++r) {
      std::vector<float> row = RandomProbs(vocab, rng, 2.f);
      if (r == 1) row[vocab / 2] = kNaN;
      if (r == 2) row[3] = kInf;
      if (r == 3) row[7] = -0.5f;
      if (r == 4) std::fill(row.begin(), row.end(), 0.f);
      if (r == 5) std::fill(row.begin(), row.end(), kNaN);
      if (r == 6) std::fill(row.begin(), row.end(), -1.f);
      // -0.0 is a zero probability, not a bad number: its bit pattern (0x80000000) must not
      // rank it above every positive value.
      if (r == 7)
        for (int64_t i = 0; i < vocab; i += 3) row[i] = -0.f;
      probs.insert(probs.end(), row.begin(), row.end());
    }
    DeviceBuffer din = UploadVector(probs), dout(batch * 4), dvalid(batch);
    TensorView in = TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab});
    TensorView out = TensorView::Contiguous(dout.data(), DType::kI32, {batch});
    SamplingOptions o;
    o.valid = TensorView::Contiguous(dvalid.data(), DType::kU8, {batch});
    o.rng.seed = rng();
    for (int op = 0; op < 5; ++op) {
      dout.Fill(0xFF);
      dvalid.Fill(0x7F);
      Status s = op == 0   ? SamplingFromProbs(e, in, out, o)
                 : op == 1 ? TopKSamplingFromProbs(e, in, out, 20, {}, o)
                 : op == 2 ? TopPSamplingFromProbs(e, in, out, 0.9f, {}, o)
                 : op == 3 ? MinPSamplingFromProbs(e, in, out, 0.1f, {}, o)
                           : TopKTopPSamplingFromProbs(e, in, out, 20, {}, 0.9f, {},
                                                       FilterApplyOrder::kJoint, o);
      REQUIRE(s.ok());
      Synchronize();
      if (DryRun()) continue;
      std::vector<int32_t> tok = DownloadVector<int32_t>(dout, batch);
      std::vector<uint8_t> valid = DownloadVector<uint8_t>(dvalid, batch);
      for (int64_t r = 0; r < batch; ++r) {
        INFO(fmt::format("op {} vocab {} row {}: token {} valid {}", op, vocab, r, tok[r],
                         valid[r]));
        CHECK(tok[r] >= 0);
        CHECK(tok[r] < vocab);
        CHECK(static_cast<int>(valid[r]) == (r == 0 || r == 7 ? 1 : 0));
        // A row with one bad value, or with negative zeros, still samples a token with
        // positive probability.
        if ((r >= 1 && r <= 3) || r == 7) CHECK(probs[r * vocab + tok[r]] > 0.f);
      }
    }
  }
  // Logits: NaN / +inf rows invalid, all -inf invalid, ordinary valid; an index out of range.
  const int64_t vocab = 1000, batch = 4;
  std::vector<float> logits = RandomNormal(batch * vocab, rng, 2.f);
  logits[vocab + 5] = kNaN;
  logits[2 * vocab + 9] = kInf;
  std::fill(logits.begin() + 3 * vocab, logits.end(), -kInf);
  std::vector<int32_t> idx = {0, 1, 2, 3, 4, -1};
  DeviceBuffer din = UploadVector(logits), didx = UploadVector(idx), dout(24), dvalid(6);
  dout.Fill(0xFF);
  SamplingOptions o;
  o.indices = TensorView::Contiguous(didx.data(), DType::kI32, {6});
  o.valid = TensorView::Contiguous(dvalid.data(), DType::kU8, {6});
  Status s =
      TopKTopPSamplingFromLogits(e, TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab}),
                                 TensorView::Contiguous(dout.data(), DType::kI32, {6}), 50, {},
                                 0.9f, {}, FilterApplyOrder::kTopKFirst, o);
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<int32_t> tok = DownloadVector<int32_t>(dout, 6);
  std::vector<uint8_t> valid = DownloadVector<uint8_t>(dvalid, 6);
  const std::vector<int> want_valid = {1, 0, 0, 0, 0, 0};
  for (int r = 0; r < 6; ++r) {
    INFO(fmt::format("logits row {}: token {} valid {}", r, tok[r], valid[r]));
    CHECK(tok[r] >= 0);
    CHECK(tok[r] < vocab);
    CHECK(static_cast<int>(valid[r]) == want_valid[r]);
  }
}

// Top-p over 1 row (a cluster of 8), 64 rows (clusters of 2) and 200 rows (more rows than SMs:
// one 256-thread block per row, two per SM); the default, pass 2's per-lane candidate columns
// everywhere (candidates 6) and its per-warp ballots everywhere (7). One flat row of 32000 draws
// the same token at two offsets with a chance of about 1e-4.
TEST_CASE("same seed and offset give the same tokens; another offset differs", "[gpu][sampling]") {
  // 11: session 6's block scans (the default takes the fast scans with the exact prefix since
  // session 7).
  // 13: the default with its form compiled in (session 8 round 2). 14: 13 with digit 3's counts
  // pushed (session 10), which runs in 512-thread blocks only: 1 row (a cluster of 8) and 64
  // (clusters of 2) in 512-thread blocks (tuning.threads); 17: 14 with session 10 round 2's
  // levers (the default's at 64 rows since round 2), the same launches; 15: 14 with round 2's
  // lean zeroing only (the default's at 1 row in clusters of 8 since round 2).
  // 19, 21, 22: session 11's levers on the default's push form, the same launches.
  for (const int candidates : SelectedCandidates({-1, 13, 14, 15, 17, 19, 21, 22, 10, 11, 6, 7, 8}))
    for (const int64_t batch : {1, 64, 200}) {
      if (candidates >= 14 && batch == 200) continue;
      INFO(fmt::format("candidates {}, {} rows", candidates, batch));
      std::mt19937 rng(Seed());
      const int64_t vocab = 32000;
      std::vector<float> probs;
      for (int64_t r = 0; r < batch; ++r) {
        std::vector<float> row = RandomProbs(vocab, rng, 1.f);  // flat: many candidates
        probs.insert(probs.end(), row.begin(), row.end());
      }
      DeviceBuffer din = UploadVector(probs), dout(batch * 4);
      TensorView in = TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab});
      TensorView out = TensorView::Contiguous(dout.data(), DType::kI32, {batch});
      auto draw = [&](uint64_t seed, uint64_t offset) {
        SamplingOptions o;
        o.rng.seed = seed;
        o.rng.offset = offset;
        o.tuning.candidates = candidates;
        if (candidates >= 14) o.tuning.threads = 512;
        dout.Fill(0xFF);
        REQUIRE(TopPSamplingFromProbs(TestEngine(), in, out, 0.95f, {}, o).ok());
        Synchronize();
        return DryRun() ? std::vector<int32_t>(batch) : DownloadVector<int32_t>(dout, batch);
      };
      const uint64_t seed = rng();
      std::vector<int32_t> a = draw(seed, 0), b = draw(seed, 0), c = draw(seed, 1),
                           d = draw(seed + 1, 0);
      if (DryRun()) continue;
      CHECK(a == b);
      int diff_offset = 0, diff_seed = 0;
      for (int64_t r = 0; r < batch; ++r) {
        diff_offset += a[r] != c[r];
        diff_seed += a[r] != d[r];
      }
      INFO(fmt::format("rows differing: offset {} seed {} of {}", diff_offset, diff_seed, batch));
      CHECK(diff_offset > batch / 2);
      CHECK(diff_seed > batch / 2);
    }
}

// The fast digit scans (candidates 9: the variant field fast_scan, TopPScanDigit) compute the
// same sums in the same order as session 6's block scans and reductions (candidates 11), so the
// same threshold, kept mass and target: the same tokens for every seed and offset. So does the
// default of session 7 (the fast scans with the mass above the bin from the exact prefix at digits
// 2-3: the same integers; candidates 10 since session 8), and the default since session 8 (digits
// 2-3 scanned in integers by every warp: the same exact sums), with its form compiled in
// (candidates 13: the same code paths), and 13 with digit 3's counts pushed from each block's own
// candidates (candidates 14, session 10: the same integers; 15-17 with round 2's levers, the same
// integers); 13 and 14 also without the slice
// cache (tuning.cache_bytes 0: in clusters of 8 the default caches). Rows: flat and peaked softmax
// rows, weights of a few values (ties: many equal masses at every digit), a row whose masses are
// powers of two (p lands exactly on a bin's edge) and a uniform row (the candidate regions
// overflow: the digits over the slices); 1 row (a cluster of 8; x 32000 in 256-thread blocks, x
// 128256 in 512-thread blocks), 64 (clusters of 2; x 128256 as the benchmark's B = 64), 200 (one
// block per row).
TEST_CASE("top-p: the fast digit scans draw the same tokens as the block scans",
          "[gpu][sampling]") {
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 32000}, {1, 128256}, {64, 32000}, {64, 128256}, {200, 32000}};
  for (const auto& [batch, vocab] : shapes) {
    std::mt19937 rng(Seed());
    std::vector<float> probs;
    for (int64_t r = 0; r < batch; ++r) {
      std::vector<float> row;
      const int kind = static_cast<int>((r + batch) % 5);
      if (kind == 0 || kind == 1) {
        row = RandomProbs(vocab, rng, kind == 0 ? 1.f : 5.f);
      } else if (kind == 2) {
        row.resize(vocab);
        for (float& x : row) x = static_cast<float>(1 << (rng() % 4)) / (3.75f * vocab);
      } else if (kind == 3) {
        row.assign(vocab, 0x1p-30f);
        for (int i = 0; i < 12; ++i) row[(rng() % vocab)] = std::ldexp(1.f, -1 - i);
      } else {
        row.assign(vocab, 1.f / vocab);
      }
      probs.insert(probs.end(), row.begin(), row.end());
    }
    DeviceBuffer din = UploadVector(probs), dout(batch * 4);
    TensorView in = TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab});
    TensorView out = TensorView::Contiguous(dout.data(), DType::kI32, {batch});
    // Under the sanitizers (FLASHJIT_SAMPLING_DRAWS set, as for the distribution cases) 2
    // offsets instead of 8.
    const uint64_t offsets = std::getenv("FLASHJIT_SAMPLING_DRAWS") ? 2 : 8;
    for (const float top_p : {1e-6f, 0.25f, 0.5f, 0.75f, 0.9f, 1.f}) {
      // The default (digits 2-3 scanned in integers by every warp, except in clusters of
      // 256-thread blocks), 9, 10 (session 7's default: the exact prefix alone), the default
      // with every form's code (12), with its form compiled in (13), 13 with digit 3's counts
      // pushed (14), and 13 and 14 without the slice cache.
      // Session 10 round 2: 14 with the lean zeroing (15), and the bounds with the exchange's
      // header (16), and two rounds of keys in flight in clusters of 2 (17).
      // Session 11: round 2's default with the owner's inputs read early (19), with the last
      // cluster barrier relaxed (21), and with both (22).
      constexpr int kForms[] = {-1, 9, 10, 12, 13, 14, 13, 14, 15, 16, 17, 19, 21, 22};
      constexpr int64_t kCache[] = {-1, -1, -1, -1, -1, -1, 0, 0, -1, -1, -1, -1, -1, -1};
      constexpr int kN = 14;
      const std::vector<int> chosen =
          SelectedCandidates({-1, 9, 10, 12, 13, 14, 15, 16, 17, 19, 21, 22});
      int64_t differ[kN] = {}, draws = 0;
      for (uint64_t offset = 0; offset < offsets; ++offset) {
        auto draw = [&](int candidates, int64_t cache_bytes = -1) {
          SamplingOptions o;
          o.rng.seed = 7;
          o.rng.offset = offset;
          o.tuning.candidates = candidates;
          o.tuning.cache_bytes = cache_bytes;
          dout.Fill(0xFF);
          REQUIRE(TopPSamplingFromProbs(TestEngine(), in, out, top_p, {}, o).ok());
          Synchronize();
          return DryRun() ? std::vector<int32_t>(batch) : DownloadVector<int32_t>(dout, batch);
        };
        const std::vector<int32_t> plain = draw(11);
        for (int f = 0; f < kN; ++f) {
          if (std::find(chosen.begin(), chosen.end(), kForms[f]) == chosen.end()) continue;
          const std::vector<int32_t> fast = draw(kForms[f], kCache[f]);
          for (int64_t r = 0; r < batch; ++r) {
            differ[f] += fast[r] != plain[r];
            CHECK(fast[r] >= 0);
            CHECK(fast[r] < vocab);
          }
        }
        draws += batch;
      }
      INFO(fmt::format(
          "{} x {}, top-p {}: {} / {} / {} / {} / {} / {} / {} / {} / {} / {} / {} / {} / {} / {} "
          "of {} tokens differ from the block scans' (default / candidates 9 / 10 / 12 / 13 / 14 "
          "/ 13 uncached / 14 uncached / 15 / 16 / 17 / 19 / 21 / 22)",
          batch, vocab, top_p, differ[0], differ[1], differ[2], differ[3], differ[4], differ[5],
          differ[6], differ[7], differ[8], differ[9], differ[10], differ[11], differ[12],
          differ[13], draws));
      for (int f = 0; f < kN; ++f) CHECK(differ[f] == 0);
    }
  }
}

// The phase stamps (SamplingTuning::stamps, a variant compiled with them) only observe: the
// same tokens as the plain kernel, and every launched block's stamps in order (start, the
// phases that ran, end), at 1 row (a cluster of 8), 64 rows (clusters of 2) and 200 rows (one
// block per row); the default and the form without the cluster exchange.
TEST_CASE("top-p phase stamps leave the tokens unchanged and come in order", "[gpu][sampling]") {
  for (const int candidates : {-1, 8})
    for (const int64_t batch : {1, 64, 200}) {
      INFO(fmt::format("candidates {}, {} rows", candidates, batch));
      std::mt19937 rng(Seed());
      const int64_t vocab = 32000;
      std::vector<float> probs;
      for (int64_t r = 0; r < batch; ++r) {
        std::vector<float> row = RandomProbs(vocab, rng, r % 2 ? 5.f : 1.f);
        probs.insert(probs.end(), row.begin(), row.end());
      }
      const int64_t max_blocks = batch * 8, slots = 16;
      DeviceBuffer din = UploadVector(probs), dout(batch * 4), dstamps(max_blocks * slots * 8);
      TensorView in = TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab});
      TensorView out = TensorView::Contiguous(dout.data(), DType::kI32, {batch});
      auto draw = [&](void* stamps) {
        SamplingOptions o;
        o.rng.seed = 42;
        o.rng.offset = 3;
        o.tuning.candidates = candidates;
        o.tuning.stamps = stamps;
        dout.Fill(0xFF);
        REQUIRE(TopPSamplingFromProbs(TestEngine(), in, out, 0.9f, {}, o).ok());
        Synchronize();
        return DryRun() ? std::vector<int32_t>(batch) : DownloadVector<int32_t>(dout, batch);
      };
      dstamps.Fill(0);
      const std::vector<int32_t> plain = draw(nullptr), stamped = draw(dstamps.data());
      if (DryRun()) continue;
      CHECK(plain == stamped);
      const std::vector<uint64_t> st = DownloadVector<uint64_t>(dstamps, max_blocks * slots);
      int64_t blocks = 0, out_of_order = 0;
      for (int64_t b = 0; b < max_blocks; ++b) {
        const uint64_t* s = st.data() + b * slots;
        if (s[0] == 0) continue;
        ++blocks;
        uint64_t prev = s[0];
        // Time order: digit 2's fill (12) before its end (6), digit 3's (13) before 7.
        for (int i : {1, 2, 3, 4, 5, 12, 6, 13, 7, 8, 9, 10, 11}) {
          if (s[i] == 0) continue;
          out_of_order += s[i] < prev;
          prev = s[i];
        }
        out_of_order += s[11] == 0 || s[14] == 0 || s[15] < s[14];
      }
      INFO(fmt::format("{} blocks stamped, {} out of order", blocks, out_of_order));
      CHECK(blocks >= batch);
      CHECK(blocks % batch == 0);
      CHECK(out_of_order == 0);
    }
}

TEST_CASE("a captured graph replays with seed/offset read from device memory", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  const int64_t batch = 32, vocab = 32000;
  std::vector<float> probs;
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<float> row = RandomProbs(vocab, rng, 1.f);
    probs.insert(probs.end(), row.begin(), row.end());
  }
  DeviceBuffer din = UploadVector(probs), dout(batch * 4), dref(batch * 4), dseed(8), doff(8);
  TensorView in = TensorView::Contiguous(din.data(), DType::kF32, {batch, vocab});
  const uint64_t seed = rng();
  SamplingOptions dev;
  dev.rng.seed_device = dseed.data();
  dev.rng.offset_device = doff.data();
  uint64_t zero = 0;
  dseed.Upload(&seed, 8);
  doff.Upload(&zero, 8);
  if (DryRun()) {
    REQUIRE(TopKTopPSamplingFromProbs(TestEngine(), in,
                                      TensorView::Contiguous(dout.data(), DType::kI32, {batch}),
                                      100, {}, 0.9f, {}, FilterApplyOrder::kJoint, dev)
                .ok());
    return;
  }
  CapturedGraph graph(/*blocking=*/true);
  const Status s = graph.Capture(
      [&](CUstream stream) {
        dev.stream = stream;
        return TopKTopPSamplingFromProbs(TestEngine(), in,
                                         TensorView::Contiguous(dout.data(), DType::kI32, {batch}),
                                         100, {}, 0.9f, {}, FilterApplyOrder::kJoint, dev);
      },
      /*global=*/true);
  INFO(s.ToString());
  REQUIRE(s.ok());
  int differing = 0;
  std::vector<int32_t> first;
  for (uint64_t offset : {0ull, 5ull, 12345ull}) {
    doff.Upload(&offset, 8);
    dout.Fill(0xFF);
    graph.Replay();
    std::vector<int32_t> got = DownloadVector<int32_t>(dout, batch);
    SamplingOptions direct;
    direct.rng.seed = seed;
    direct.rng.offset = offset;
    dref.Fill(0xFF);
    REQUIRE(TopKTopPSamplingFromProbs(TestEngine(), in,
                                      TensorView::Contiguous(dref.data(), DType::kI32, {batch}),
                                      100, {}, 0.9f, {}, FilterApplyOrder::kJoint, direct)
                .ok());
    Synchronize();
    std::vector<int32_t> want = DownloadVector<int32_t>(dref, batch);
    INFO("offset " << offset);
    CHECK(got == want);
    if (first.empty()) {
      first = got;
    } else {
      for (int64_t r = 0; r < batch; ++r) differing += got[r] != first[r];
    }
  }
  CHECK(differing > batch / 2);
}

TEST_CASE("chain speculative sampling keeps the target distribution", "[gpu][sampling]") {
  std::mt19937 rng(Seed());
  const int64_t batch = 1 << 18, n = 2, vocab = 32;
  std::vector<float> q0 = RandomProbs(vocab, rng, 1.f), q1 = RandomProbs(vocab, rng, 1.f);
  std::vector<float> p0 = RandomProbs(vocab, rng, 1.f), p1 = RandomProbs(vocab, rng, 1.f),
                     p2 = RandomProbs(vocab, rng, 1.f);
  std::vector<float> draft(batch * n * vocab), target(batch * (n + 1) * vocab);
  std::vector<int32_t> ids(batch * n);
  std::discrete_distribution<int> dq0(q0.begin(), q0.end()), dq1(q1.begin(), q1.end());
  for (int64_t b = 0; b < batch; ++b) {
    std::copy(q0.begin(), q0.end(), draft.begin() + (b * n) * vocab);
    std::copy(q1.begin(), q1.end(), draft.begin() + (b * n + 1) * vocab);
    std::copy(p0.begin(), p0.end(), target.begin() + (b * (n + 1)) * vocab);
    std::copy(p1.begin(), p1.end(), target.begin() + (b * (n + 1) + 1) * vocab);
    std::copy(p2.begin(), p2.end(), target.begin() + (b * (n + 1) + 2) * vocab);
    ids[b * n] = dq0(rng);
    ids[b * n + 1] = dq1(rng);
  }
  DeviceBuffer dd = UploadVector(draft), dt = UploadVector(target), di = UploadVector(ids);
  DeviceBuffer dout(batch * (n + 1) * 4), dacc(batch * 4), demit(batch * 4);
  dout.Fill(0x7F);
  dacc.Fill(0);
  demit.Fill(0);
  SamplingRng r;
  r.seed = rng();
  Status s = ChainSpeculativeSampling(
      TestEngine(), TensorView::Contiguous(dd.data(), DType::kF32, {batch, n, vocab}),
      TensorView::Contiguous(di.data(), DType::kI32, {batch, n}),
      TensorView::Contiguous(dt.data(), DType::kF32, {batch, n + 1, vocab}),
      TensorView::Contiguous(dout.data(), DType::kI32, {batch, n + 1}),
      TensorView::Contiguous(dacc.data(), DType::kI32, {batch}),
      TensorView::Contiguous(demit.data(), DType::kI32, {batch}), r);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<int32_t> out = DownloadVector<int32_t>(dout, batch * (n + 1));
  std::vector<int32_t> emit = DownloadVector<int32_t>(demit, batch);
  // Token 0 ~ p0; token 1 ~ p1 given the first draft was accepted.
  std::vector<int64_t> c0(vocab, 0), c1(vocab, 0);
  int64_t n1 = 0, bad = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const int32_t* o = &out[b * (n + 1)];
    const int32_t em = emit[b];
    bad += em < 0 || em > n;
    for (int64_t i = 0; i <= n; ++i) {
      const bool should_be_token = i <= em;
      bad += should_be_token ? (o[i] < 0 || o[i] >= vocab) : o[i] != -1;
      if (i < em) bad += o[i] != ids[b * n + i];
    }
    if (o[0] >= 0 && o[0] < vocab) ++c0[o[0]];
    if (em >= 1 && o[1] >= 0 && o[1] < vocab) {
      ++c1[o[1]];
      ++n1;
    }
  }
  std::vector<double> e0(p0.begin(), p0.end()), e1(p1.begin(), p1.end());
  int dof0, dof1;
  int64_t imp0, imp1;
  const double chi0 = ref::ChiSquare(c0, e0, batch, &dof0, &imp0);
  const double chi1 = ref::ChiSquare(c1, e1, n1, &dof1, &imp1);
  INFO(fmt::format("bad {}, chi2 first {:.1f} (dof {}), second {:.1f} over {} (dof {})", bad, chi0,
                   dof0, chi1, n1, dof1));
  CHECK(bad == 0);
  CHECK(chi0 < ChiSquareBound(dof0));
  CHECK(chi1 < ChiSquareBound(dof1));
}

}  // namespace
}  // namespace flashjit::test
