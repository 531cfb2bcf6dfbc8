// The RoPE and KV-append kernel configurations the benchmarks sweep (bench_rope, bench_page).
// The GPU tests (tests/gpu/rope_test.cc, page_test.cc) force every one of them against the fp64
// reference, so that whichever the chooser picks next has been checked.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "src/ops/page/page_spec.h"
#include "src/ops/rope/rope_spec.h"

namespace flashjit::bench {

// The warp kernel (the first default), the tile kernel's best, and the row kernel over warps /
// heads in flight (items) / slots / full grid / launch bound (min blocks per SM).
inline std::vector<ops::RopeSpec> RopeSweep() {
  std::vector<ops::RopeSpec> specs;
  ops::RopeSpec warp;
  warp.kernel = 0;
  specs.push_back(warp);
  ops::RopeSpec tile;
  tile.kernel = 1;
  tile.warps = 4;
  tile.items = 5;
  specs.push_back(tile);
  for (auto [w, i, sl, g, mb] : std::vector<std::array<int, 5>>{{4, 1, 4, 0, 1},
                                                                {4, 2, 4, 0, 1},
                                                                {4, 4, 4, 0, 1},
                                                                {4, 2, 4, 0, 8},
                                                                {4, 4, 4, 0, 6},
                                                                {4, 1, 2, 0, 1},
                                                                {4, 2, 2, 0, 1},
                                                                {4, 4, 2, 0, 1},
                                                                {4, 2, 8, 0, 1},
                                                                {8, 2, 4, 0, 1},
                                                                {8, 4, 4, 0, 1},
                                                                {4, 2, 8, 1, 1},
                                                                {4, 4, 8, 1, 1},
                                                                {4, 2, 8, 1, 8}}) {
    ops::RopeSpec s;
    s.kernel = 2;
    s.warps = static_cast<uint8_t>(w);
    s.items = static_cast<uint8_t>(i);
    s.slots = static_cast<uint8_t>(sl);
    s.full_grid = static_cast<uint8_t>(g);
    s.minb = static_cast<uint8_t>(mb);
    specs.push_back(s);
  }
  return specs;
}

// The token-tile append form over threads / items, the per-item form (the first default;
// resolve-first for fp8 caches), and the token-tile form over a resident grid (tokens = 2).
inline std::vector<ops::AppendKvSpec> AppendKvSweep() {
  std::vector<ops::AppendKvSpec> forms;
  for (auto [tokens, threads, items] : std::vector<std::array<int, 3>>{{1, 256, 4},
                                                                       {1, 256, 2},
                                                                       {1, 128, 4},
                                                                       {1, 512, 2},
                                                                       {1, 512, 4},
                                                                       {1, 128, 2},
                                                                       {0, 256, 4},
                                                                       {0, 256, 2},
                                                                       {2, 128, 2},
                                                                       {2, 256, 2},
                                                                       {2, 128, 4},
                                                                       {2, 512, 2}}) {
    ops::AppendKvSpec f;
    f.tokens = static_cast<uint8_t>(tokens != 0);
    f.loop = static_cast<uint8_t>(tokens == 2);
    f.threads = static_cast<uint16_t>(threads);
    f.items = static_cast<uint8_t>(items);
    forms.push_back(f);
  }
  return forms;
}

}  // namespace flashjit::bench
