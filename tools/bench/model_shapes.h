// Shapes of real models for the layer benches' `--models` mode (bench_norm, bench_rope,
// bench_activation, bench_page; the PyTorch side is tools/bench/torch_layer_ops.py --models, which
// keeps the same lists). Token counts from one decode token to a 16k-token prefill; hidden sizes
// of the common model families (3584: Qwen2-7B; 4100: not a multiple of 8), QK-norm heads, MLP
// widths (3584: a TP-sharded one), RoPE head layouts and KV-append shards.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <tuple>
#include <vector>

#include "tools/bench/bench_util.h"

namespace flashjit::bench {

inline const std::vector<int64_t>& ModelTokens() {
  static const std::vector<int64_t> v{1, 16, 256, 2048, 16384};
  return v;
}

inline const std::vector<int64_t>& ModelHiddens() {
  static const std::vector<int64_t> v{2048, 3072, 3584, 4096, 4100, 5120, 7168, 8192, 12288, 16384};
  return v;
}

// QK-norm [tokens, heads, head_dim].
inline const std::vector<std::array<int64_t, 2>>& ModelQkNorm() {
  static const std::vector<std::array<int64_t, 2>> v{{32, 128}, {28, 128}, {16, 256}, {8, 64}};
  return v;
}

// Gated-MLP widths d (input [tokens, 2d]).
inline const std::vector<int64_t>& ModelActDims() {
  static const std::vector<int64_t> v{3584, 11008, 14336, 18944};
  return v;
}

// RoPE: q heads, k heads, head_dim, rotary_dim.
inline const std::vector<std::array<int64_t, 4>>& ModelRope() {
  static const std::vector<std::array<int64_t, 4>> v{
      {28, 4, 128, 128}, {64, 8, 128, 128}, {16, 8, 256, 256}, {32, 32, 64, 64}, {32, 8, 128, 64}};
  return v;
}

// KV append: kv heads (tensor-parallel shards), head_dim, page size.
inline std::vector<std::array<int64_t, 3>> ModelAppend() {
  std::vector<std::array<int64_t, 3>> v;
  for (int64_t h : {1, 2, 4, 8})
    for (int64_t d : {64, 128, 256})
      for (int64_t p : {1, 16, 64}) v.push_back({h, d, p});
  return v;
}

// Requests of an append of `tokens`: one token each up to 256 (decode), else 64 prefills.
inline int64_t ModelAppendBatch(int64_t tokens) { return tokens <= 256 ? tokens : 64; }

// Copies of an input of `bytes` to rotate over so that the set exceeds the 60 MB L2.
inline int ModelCopies(size_t bytes) {
  return bytes >= (64u << 20) ? 1 : std::min<int>(64, static_cast<int>((160u << 20) / bytes + 1));
}

// Random device buffers keyed by (role, copy, bytes), shared by every case of the same size (the
// models mode runs hundreds of shapes; allocating each afresh would hold tens of GB). In dry run
// one small aligned host block stands for all of them: no kernel runs, only the pointers'
// alignment is read by the choosers.
inline void* ModelBuffer(int role, int copy, size_t bytes) {
  if (DryRun()) {
    static void* dummy = DeviceAlloc(1 << 16);
    return dummy;
  }
  static std::map<std::tuple<int, int, size_t>, void*> pool;
  void*& p = pool[{role, copy, bytes}];
  if (!p) {
    p = DeviceAlloc(bytes);
    DeviceFillRandom16(p, bytes / 2, 1.f);
  }
  return p;
}

}  // namespace flashjit::bench
