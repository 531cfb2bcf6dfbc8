// The norm variants `flashjit_bench_norm --sweep` times, one list per benchmark shape. The GPU
// test tests/gpu/norm_variants_test.cc runs every one of them against the fp64 reference, so
// that whichever the chooser picks next has been checked.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "src/ops/norm/norm_spec.h"

namespace flashjit::bench {

// One-row-per-block kernel (norm_one_pass.cuh) unless `gs` (the resident-grid loop, one block
// per row) or `pf` (a resident grid that prefetches the next row group); `wp`: weights
// prefetched into L1; `cs`: evict-first hints on activations.
struct NormKnob {
  int threads, items, rows = 1;
  bool pf = false, gs = false, wp = false, cs = true;
  int mb = 0;  // launch bounds: at least mb blocks per SM (0: no minimum)

  // A sweep repeats a knob to time it beside its neighbours (A/B rows); tests run each once.
  bool operator==(const NormKnob& o) const {
    return std::tie(threads, items, rows, pf, gs, wp, cs, mb) ==
           std::tie(o.threads, o.items, o.rows, o.pf, o.gs, o.wp, o.cs, o.mb);
  }

  ops::NormSpec Spec() const {
    ops::NormSpec s;
    s.threads = static_cast<uint16_t>(threads);
    s.items = static_cast<uint8_t>(items);
    s.rows = static_cast<uint8_t>(rows);
    s.prefetch = pf;
    s.grid_stride = gs;
    s.wprefetch = wp;
    s.streaming = cs;
    s.minb = static_cast<uint8_t>(mb);
    return s;
  }
};

struct NormSweepCase {
  ops::NormKind kind;
  int64_t rows, heads, dim;  // heads = 0: 2-D [rows, dim]
  std::vector<NormKnob> knobs;
};

inline std::vector<NormSweepCase> NormSweep() {
  using K = ops::NormKind;
  using N = NormKnob;
  // N{threads, items, rows, pf, gs, wp, cs, mb}
  return {
      {K::kRms,
       8192,
       0,
       8192,
       {N{128, 8, 1, false, false, true}, N{128, 8}, N{256, 4}, N{128, 8, 1, false, true},
        N{128, 8, 1, false, true, false, false}, N{128, 8, 1, false, false, false, false},
        N{128, 8, 1, false, false, false, true, 10}, N{128, 8},
        N{128, 8, 1, false, false, false, true, 10}}},
      {K::kRms,
       16384,
       0,
       4096,
       {N{64, 8, 1, false, false, true}, N{64, 8}, N{128, 4}, N{256, 2},
        N{64, 8, 1, false, true, false, false}, N{128, 4, 1, false, false, false, true, 16},
        N{128, 4}, N{128, 4, 1, false, false, false, true, 16}, N{128, 4}}},
      {K::kRms, 4096, 0, 16384, {N{256, 8}, N{512, 4}, N{256, 8, 1, false, true}}},
      {K::kFusedAdd,
       8192,
       0,
       8192,
       {N{1024, 1, 1, false, false, true}, N{1024, 1}, N{256, 4}, N{128, 8},
        N{256, 4, 1, false, true, false, false}}},
      {K::kFusedAdd, 16384, 0, 4096, {N{64, 8}, N{128, 4}, N{64, 8, 1, false, true}}},
      {K::kLayer,
       8192,
       0,
       8192,
       {N{256, 4}, N{256, 4, 1, false, false, true}, N{256, 4, 1, false, true},
        N{128, 8, 1, false, true}, N{512, 2, 1, true}, N{256, 4, 1, false, false, false, true, 6},
        N{256, 4}}},
      {K::kRms,
       16384,
       32,
       128,
       {N{4, 4, 64, true}, N{8, 2, 32, false, true}, N{8, 2, 16, true}, N{16, 1, 16, true},
        N{4, 4, 64}, N{8, 2, 32}, N{4, 4, 32}, N{4, 4, 64, true}, N{4, 4, 64}}},
      {K::kRms,
       64,
       0,
       4096,
       {N{512, 1}, N{512, 1, 1, false, false, true}, N{128, 4}, N{512, 1, 1, false, true},
        N{64, 8, 1, false, true}}},
      {K::kRms, 1, 0, 4096, {N{512, 1}, N{64, 8, 1, false, true}}},
      {K::kFusedAdd, 64, 0, 4096, {N{512, 1}, N{128, 4, 1, false, true}}},
  };
}

}  // namespace flashjit::bench
