// The one launcher behind every normalization op: validates, chooses the variant, launches.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include "src/ops/norm/norm_spec.h"

namespace flashjit::ops {

struct NormArgs {
  NormKind kind = NormKind::kRms;
  bool gemma = false;
  TensorView input;     // [tokens, hidden] or [tokens, heads, hidden]
  TensorView residual;  // fused add only: same shape as input
  TensorView weight;    // [hidden]
  TensorView bias;      // layernorm only: [hidden]
  TensorView out;       // rms / layer: same shape as input; fused add: ignored (= input)
  float eps = 1e-6f;
};

// Checks every argument (InvalidArgument before any launch), then launches. `force`, when
// non-null, replaces the chosen variant's knobs (benchmarks and tuning); its dtype, kind, vec
// and gemma are overwritten with what the tensors require.
Status RunNorm(Engine& engine, const NormArgs& args, void* stream, const NormSpec* force = nullptr);

}  // namespace flashjit::ops
