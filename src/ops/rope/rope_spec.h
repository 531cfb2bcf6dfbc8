// The typed spec of the `rope` family and the argument bundle of its one launcher.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

enum class RopeMode : uint8_t { kPosIds = 0, kIndptr = 1, kCache = 2 };

struct RopeSpec {
  static constexpr uint32_t kFamilyId = FamilyId("rope");
  DType dtype = DType::kBF16;
  DType pos_dtype = DType::kI32;
  RopeMode mode = RopeMode::kPosIds;
  uint8_t interleave = 0;
  uint8_t vec = 8;        // elements per access
  uint8_t warps = 4;      // warps per block (warp kernel: tokens per block)
  uint8_t kernel = 2;     // 0 warp kernel, 1 tile kernel, 2 row kernel (templates/rope/rope.cuh)
  uint8_t items = 4;      // tile kernel: work items per thread; row kernel: heads in flight
  uint8_t minb = 1;       // launch bounds: blocks per SM the registers must allow
  uint8_t slots = 0;      // row kernel launch parameter (not part of the variant): threads that
                          // split a token's heads; 0 = the chooser's pick
  uint8_t full_grid = 0;  // row kernel launch parameter: one block per token group (1) or a
                          // grid of resident blocks walking over the tokens (0)

  Result<VariantSpec> ToVariant() const;
};

struct RopeArgs {
  RopeMode mode = RopeMode::kPosIds;
  TensorView q, k, q_out, k_out;  // [nnz, heads, head_dim]
  TensorView pos;                 // kPosIds, kCache: [nnz] int32 or int64
  TensorView indptr, offsets;     // kIndptr: [batch + 1], [batch] int32
  TensorView cache;               // kCache: [max_pos, rotary_dim] f32
  int64_t rotary_dim = -1;        // -1: head_dim
  bool interleave = false;
  float rope_scale = 1.f, rope_theta = 1e4f;
  bool llama31 = false;
  float low_freq_factor = 1.f, high_freq_factor = 4.f;
  int64_t old_context_len = 8192;
  int64_t max_position = -1;  // kCache: a host-known bound on the positions, checked if >= 0
};

// Checks every argument (InvalidArgument before any launch), then launches. `force` (benchmarks)
// replaces the chosen kernel / warps / items / slots; dtype, mode, vec come from the arguments.
Status RunRope(Engine& engine, const RopeArgs& args, void* stream, const RopeSpec* force = nullptr);

}  // namespace flashjit::ops
