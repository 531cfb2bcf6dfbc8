// Sampling ops over fp32 probs: B in {1, 64, 256} x V in {128256, 32000}, on peaked (logits with
// std 5) and flat (std 1) rows. Bytes = one read of the probs (what any method must move).
// PyTorch's sort-based baselines on the same shapes: tools/bench/torch_sampling.py.
//
// `--only TEXT`: time only the rows whose name holds TEXT (e.g. "top_p0.9 B=64 V=128256 std1",
// for a profiler); `--no-sweep`: leave out the split sweep. `--stamps`: also the two-pass top-p
// kernel's phase breakdown at B = 1 and 64 x 128256 (the variant with phase stamps,
// SamplingTuning::stamps), for the default, session 10's default (14, digit 3's counts pushed
// without round 2's levers).
#include <flashjit/sampling.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "src/runtime/driver.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;

namespace {

void Upload(void* dst, const std::vector<float>& host) {
  if (bench::DryRun()) return;
  auto d = runtime::Driver();
  if (!d.ok()) throw std::runtime_error(d.status().ToString());
  (*d)->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), host.data(), host.size() * 4);
}

std::vector<float> SoftmaxRows(int64_t batch, int64_t vocab, float stddev, uint32_t seed) {
  std::vector<float> v(batch * vocab);
  if (bench::DryRun()) return v;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, stddev);
  for (int64_t r = 0; r < batch; ++r) {
    float* row = v.data() + r * vocab;
    float mx = -1e30f;
    for (int64_t i = 0; i < vocab; ++i) mx = std::max(mx, row[i] = nd(rng));
    double sum = 0;
    for (int64_t i = 0; i < vocab; ++i) sum += (row[i] = std::exp(row[i] - mx));
    for (int64_t i = 0; i < vocab; ++i) row[i] = static_cast<float>(row[i] / sum);
  }
  return v;
}

// Copies of one batch of softmax rows on the device, enough (up to 8) to exceed the 50 MB L2
// when the timed calls rotate over them.
std::vector<void*> RotatedProbs(int64_t batch, int64_t vocab, float stddev) {
  const size_t bytes = batch * vocab * 4;
  const int copies = static_cast<int>(std::min<size_t>(8, (160u << 20) / bytes + 1));
  const std::vector<float> host = SoftmaxRows(batch, vocab, stddev, 1234 + batch);
  std::vector<void*> in;
  for (int c = 0; c < copies; ++c) {
    in.push_back(bench::DeviceAlloc(bytes));
    Upload(in.back(), host);
  }
  return in;
}

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

struct Op {
  const char* name;
  std::function<Status(int)> run;
};

// The timed ops. `probs(i)`: the i-th rotated input; `o`: the output of the renorm / mask /
// softmax ops. The split sweep times the first kFilterOps (the sampling filters).
constexpr size_t kFilterOps = 5;
std::vector<Op> SamplingOps(Engine& e, std::function<TensorView(int)> probs, TensorView s,
                            TensorView o, SamplingOptions opt) {
  return {
      {"sample", [=, &e](int i) { return SamplingFromProbs(e, probs(i), s, opt); }},
      {"top_k50", [=, &e](int i) { return TopKSamplingFromProbs(e, probs(i), s, 50, {}, opt); }},
      {"top_p0.9", [=, &e](int i) { return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, opt); }},
      {"min_p0.1", [=, &e](int i) { return MinPSamplingFromProbs(e, probs(i), s, 0.1f, {}, opt); }},
      {"top_k50_top_p0.9_kfirst",
       [=, &e](int i) {
         return TopKTopPSamplingFromProbs(e, probs(i), s, 50, {}, 0.9f, {},
                                          FilterApplyOrder::kTopKFirst, opt);
       }},
      {"top_k50_top_p0.9_joint",
       [=, &e](int i) {
         return TopKTopPSamplingFromProbs(e, probs(i), s, 50, {}, 0.9f, {},
                                          FilterApplyOrder::kJoint, opt);
       }},
      {"top_k_renorm50", [=, &e](int i) { return TopKRenormProbs(e, probs(i), o, 50); }},
      {"top_p_renorm0.9", [=, &e](int i) { return TopPRenormProbs(e, probs(i), o, 0.9f); }},
      {"top_k_mask50", [=, &e](int i) { return TopKMaskLogits(e, probs(i), o, 50); }},
      {"softmax", [=, &e](int i) { return Softmax(e, probs(i), o, 1.f); }},
      // A/B: top-p through the radix select over the whole row, and through the two-pass
      // candidate path (options.tuning.candidates 0 / 1; "top_p0.9" is the default).
      {"top_p0.9_radix",
       [=, &e](int i) {
         SamplingOptions radix = opt;
         radix.tuning.candidates = 0;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, radix);
       }},
      {"top_p0.9_2pass",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 1;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // A/B of the two-pass kernel's forms: as first written (float weight tests, the draw
      // walked by one thread: candidates 2), and with the one-warp walk only (3).
      {"top_p0.9_2pass_r1",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 2;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_2pass_warpwalk",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 3;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // A/B of session 5: the two-pass kernel in session 4's final form (candidates 4: no
      // lane-private window, no lean cluster steps), in 512-thread blocks (threads 512: where
      // the default takes 256-thread blocks, two rows per SM, i.e. B = 256; elsewhere a launch
      // other than the chosen one), and both (session 4's default).
      {"top_p0.9_2pass_r2",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 4;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_t512",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.threads = 512;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_2pass_r2_t512",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 4;
         two.tuning.threads = 512;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // ... and the default without the lean cluster steps (candidates 5).
      {"top_p0.9_2pass_nolean",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 5;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 5 round 2: the default with pass 2's candidates in per-lane columns (no
      // ballots; candidates 6) at every shape, and with the ballots at every shape (7, the
      // default before round 2). The default takes the columns at B = 64 and 256.
      {"top_p0.9_lanecols",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 6;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_ballots",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 7;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 6: the default without the cluster exchange (candidates 8: digits 2-3 merged
      // over the cluster, the cluster reduction and the owner gather, as in session 5).
      {"top_p0.9_noexch",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 8;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 6 round 2: the fast digit scans without session 7's exact prefix (candidates 9:
      // 3 block barriers per digit; the default takes 2 at digits 2-3, 6 before session 7).
      {"top_p0.9_fastscan",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 9;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 8: the default without digits 2-3 scanned in integers by every warp
      // (candidates 10: session 7's default, 2 block barriers per digit there).
      {"top_p0.9_exactprefix",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 10;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 8 round 2: the default with its form compiled in (candidates 13: the forms the
      // launch never takes left out) and with every form's code (12).
      {"top_p0.9_runform",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 12;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_form",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 13;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 10: 13 with digit 3's counts pushed from each block's own candidates
      // (candidates 14, the default since session 10 where its form is compiled in), and without
      // the slice cache (which the default takes in clusters of 8): the default, 13 and 14.
      {"top_p0.9_push",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 14;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 10 round 2: 14 (session 10's default) zeroing only the 64 push words digit 0's
      // scan wrote (15), 15 with digit 2's bounds loaded with the exchange's header (16); 17 adds
      // two rounds of keys in flight in digit 2's fill in clusters of 2 (the default takes 15 in
      // clusters of 8, 17 in clusters of 2).
      {"top_p0.9_lean",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 15;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_ends",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 16;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 11: round 2's default with the owner's inputs read early (19: the masses above
      // b0 with the exchange's header, the uniform in its barrier's shadow).
      {"top_p0.9_early",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 19;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 11 call 2: 20 with the last cluster barrier arrived relaxed (21).
      {"top_p0.9_endrelax",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 21;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 10 round 2's default (20: 15 in clusters of 8, 17 in clusters of 2).
      {"top_p0.9_r2",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 20;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_nocache",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.cache_bytes = 0;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_form_nocache",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 13;
         two.tuning.cache_bytes = 0;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      {"top_p0.9_push_nocache",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 14;
         two.tuning.cache_bytes = 0;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
      // Session 7: the default with session 6's block scans (candidates 11: 6 block barriers
      // per digit; the default takes the fast scans with the exact prefix at digits 2-3).
      {"top_p0.9_blockscan",
       [=, &e](int i) {
         SamplingOptions two = opt;
         two.tuning.candidates = 11;
         return TopPSamplingFromProbs(e, probs(i), s, 0.9f, {}, two);
       }},
  };
}

// The phase breakdown of one top-p launch shape (`candidates`: the form), from the stamped
// variant: kRuns launches back to back over the rotated inputs, each into its own stamp rows,
// then per phase the mean over launches and blocks of thread 0's cycles since the previous
// stamp, in ns at the clock the launches ran (their %globaltimer span over their cycle span).
void StampBreakdown(Engine& e, const std::vector<void*>& in, int64_t batch, int64_t vocab,
                    int stddev, int candidates, int64_t cache_bytes = -1) {
  constexpr int kRuns = 200, kSlots = 16;
  const int64_t max_blocks = batch * 8;  // clusters of at most 8
  const size_t row_words = static_cast<size_t>(max_blocks) * kSlots;
  void* stamps = bench::DeviceAlloc(kRuns * row_words * 8);
  void* samples = bench::DeviceAlloc(batch * 4);
  std::vector<uint64_t> host(kRuns * row_words, 0);
  if (!bench::DryRun()) {
    auto d = runtime::Driver();
    if (!d.ok()) throw std::runtime_error(d.status().ToString());
    (*d)->cuMemsetD8(reinterpret_cast<CUdeviceptr>(stamps), 0, host.size() * 8);
  }
  const TensorView s = TensorView::Contiguous(samples, DType::kI32, {batch});
  for (int r = 0; r < (bench::DryRun() ? 1 : kRuns); ++r) {
    SamplingOptions o;
    o.tuning.candidates = candidates;
    o.tuning.cache_bytes = cache_bytes;
    o.tuning.stamps = static_cast<uint64_t*>(stamps) + r * row_words;
    Check(TopPSamplingFromProbs(
        e, TensorView::Contiguous(in[r % in.size()], DType::kF32, {batch, vocab}), s, 0.9f, {}, o));
  }
  if (bench::DryRun()) return;
  auto d = runtime::Driver();
  if (!d.ok()) throw std::runtime_error(d.status().ToString());
  (*d)->cuCtxSynchronize();
  (*d)->cuMemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(stamps), host.size() * 8);
  // Slots (sampling_params.cuh, kStamp*): 0 start .. 11 end, in time order with 12 (digit 2's
  // fill) before 6 and 13 (digit 3's fill) before 7; 14 / 15 %globaltimer.
  const char* names[14] = {"",        "pass 1",  "merge d0",   "scan d0", "pass 2", "pass 2 sync",
                           "scan d2", "scan d3", "select end", "owner",   "draw",   "end barrier",
                           "fill d2", "fill d3"};
  constexpr int kOrder[13] = {1, 2, 3, 4, 5, 12, 6, 13, 7, 8, 9, 10, 11};
  double sum[14] = {}, cycles = 0, ns = 0, kernel_ns = 0, total_max = 0;
  int64_t blocks = 0;
  for (int r = 0; r < kRuns; ++r) {
    uint64_t t0 = ~uint64_t{0}, t1 = 0, worst = 0;
    for (int64_t b = 0; b < max_blocks; ++b) {
      const uint64_t* st = host.data() + r * row_words + b * kSlots;
      if (st[0] == 0 || st[11] == 0) continue;
      ++blocks;
      uint64_t prev = st[0];
      for (int i : kOrder) {
        if (st[i] == 0) continue;  // the phase did not run
        sum[i] += static_cast<double>(st[i] - prev);
        prev = st[i];
      }
      cycles += static_cast<double>(st[11] - st[0]);
      ns += static_cast<double>(st[15] - st[14]);
      worst = std::max<uint64_t>(worst, st[11] - st[0]);
      t0 = std::min(t0, st[14]);
      t1 = std::max(t1, st[15]);
    }
    if (t1 > t0) kernel_ns += static_cast<double>(t1 - t0);
    total_max += static_cast<double>(worst);
  }
  if (blocks == 0) {
    fmt::print("stamps top_p0.9 c{} B={} V={} std{}: no stamps written\n", candidates, batch, vocab,
               stddev);
    return;
  }
  const double ns_per_cycle = cycles > 0 ? ns / cycles : 0;
  std::string line = fmt::format(
      "stamps top_p0.9 cand{}{} B={} V={} std{}: {} blocks/launch, kernel {:.2f} us (globaltimer), "
      "slowest block {:.2f} us, {:.3f} ns/cycle; per phase (mean of blocks) ns:",
      candidates, cache_bytes < 0 ? std::string() : fmt::format(" cache{}", cache_bytes), batch,
      vocab, stddev, static_cast<double>(blocks) / kRuns, kernel_ns / kRuns / 1e3,
      total_max / kRuns * ns_per_cycle / 1e3, ns_per_cycle);
  for (int i : kOrder)
    line +=
        fmt::format(" {} {:.0f} |", names[i], sum[i] / static_cast<double>(blocks) * ns_per_cycle);
  fmt::print("{}\n", line);
}

}  // namespace

int main(int argc, char** argv) {
  Engine& e = bench::Setup(argc, argv);
  std::string only;
  bool sweep = true, stamps = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    if (!std::strcmp(argv[i], "--no-sweep")) sweep = false;
    if (!std::strcmp(argv[i], "--stamps")) stamps = true;
  }
  if (stamps) {
    for (int64_t batch : {1, 64})
      for (float stddev : {1.f, 5.f}) {
        const std::vector<void*> in = RotatedProbs(batch, 128256, stddev);
        // The default (its form compiled in at B = 1 and 64, with digit 3's counts pushed since
        // session 10 and round 2's levers; session 11 call 2's stage: 22), 21 and round 2's
        // default (20).
        for (int candidates : {-1, 21, 20})
          StampBreakdown(e, in, batch, 128256, static_cast<int>(stddev), candidates);
      }
  }
  const auto wanted = [&](const std::string& name) {
    return only.empty() || name.find(only) != std::string::npos;
  };
  const auto any_wanted = [&](int64_t batch, int64_t vocab, float stddev) {
    return only.empty() ||
           only.find(fmt::format("B={} V={} std{}", batch, vocab, static_cast<int>(stddev))) !=
               std::string::npos ||
           only.find("B=") == std::string::npos;
  };
  for (int64_t vocab : {128256, 32000}) {
    for (int64_t batch : {1, 64, 256}) {
      for (float stddev : {1.f, 5.f}) {
        if (!any_wanted(batch, vocab, stddev)) continue;
        const size_t bytes = batch * vocab * 4;
        const std::vector<void*> in = RotatedProbs(batch, vocab, stddev);
        const int copies = static_cast<int>(in.size());
        void* samples = bench::DeviceAlloc(batch * 4);
        void* out = bench::DeviceAlloc(bytes);
        auto probs = [&](int i) {
          return TensorView::Contiguous(in[i % copies], DType::kF32, {batch, vocab});
        };
        const TensorView s = TensorView::Contiguous(samples, DType::kI32, {batch});
        const TensorView o = TensorView::Contiguous(out, DType::kF32, {batch, vocab});
        const std::vector<Op> ops = SamplingOps(e, probs, s, o, {});
        for (const Op& op : ops) {
          const std::string name =
              fmt::format("{} B={} V={} std{}", op.name, batch, vocab, static_cast<int>(stddev));
          if (!wanted(name)) continue;
          const auto run = [&](int i) { Check(op.run(i)); };
          const bench::Timings t = bench::TimeCall(run, 50, 5);
          bench::Report("sampling", name, t.alone, static_cast<double>(bytes), 0,
                        bench::TimingsNote(t, static_cast<double>(bytes)));
        }
      }
    }
  }
  // How the split of a row matters, at V = 128256 under forced tunings (c = blocks per row,
  // cache = shared-memory bytes per block holding its slice, auto = the whole slice when it is
  // at most 64 KB; c1 cache0 is the one-block-per-row kernel of the previous version).
  const int64_t vocab = 128256;
  for (int64_t batch : {1, 64, 256}) {
    for (float stddev : {1.f, 5.f}) {
      if (!sweep) break;
      if (!any_wanted(batch, vocab, stddev)) continue;
      const size_t bytes = batch * vocab * 4;
      const std::vector<void*> in = RotatedProbs(batch, vocab, stddev);
      const int copies = static_cast<int>(in.size());
      void* samples = bench::DeviceAlloc(batch * 4);
      const TensorView s = TensorView::Contiguous(samples, DType::kI32, {batch});
      auto probs = [&](int i) {
        return TensorView::Contiguous(in[i % copies], DType::kF32, {batch, vocab});
      };
      for (SamplingTuning t :
           {SamplingTuning{1, 0}, SamplingTuning{2, 0}, SamplingTuning{2, 163840},
            SamplingTuning{4, 0}, SamplingTuning{4, 131072}, SamplingTuning{8, 0},
            SamplingTuning{8, -1}}) {
        SamplingOptions opt;
        opt.tuning = t;
        const std::vector<Op> all = SamplingOps(e, probs, s, TensorView{}, opt);
        const std::vector<Op> ops(all.begin(), all.begin() + kFilterOps);
        for (const Op& op : ops) {
          const std::string name =
              fmt::format("{} c{} cache{} B={} V={} std{}", op.name, t.cluster,
                          t.cache_bytes < 0 ? std::string("auto") : std::to_string(t.cache_bytes),
                          batch, vocab, static_cast<int>(stddev));
          if (!wanted(name)) continue;
          double us = bench::MedianMicros([&](int i) { Check(op.run(i)); }, 50, 5);
          // B = 1: back to back too (synced - b2b: the host's share by cluster size).
          if (batch == 1)
            bench::Report(
                "sampling", name, us, static_cast<double>(bytes), 0,
                bench::BackToBackNote(bench::BackToBackMicros([&](int i) { Check(op.run(i)); }, 50),
                                      static_cast<double>(bytes)));
          else
            bench::Report("sampling", name, us, static_cast<double>(bytes));
        }
      }
    }
  }
  return 0;
}
