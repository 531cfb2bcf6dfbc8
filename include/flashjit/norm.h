// Normalization ops. All run on the caller's stream and return before the kernel finishes.
//
// Tensors are fp16 or bf16 with fp32 accumulation. Any hidden size works; rows whose pointers
// and strides are 16-byte aligned take the vectorised path.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

namespace flashjit {

// out = input / sqrt(mean(input^2) + eps) * weight            (gemma: * (weight + 1))
// REQUIRES: input and out [rows, hidden] with unit inner stride (rows may be strided), same
// dtype; weight [hidden] contiguous, same dtype; eps > 0. `out` may alias `input` exactly.
FLASHJIT_API Status RmsNorm(Engine& engine, const TensorView& input, const TensorView& weight,
                            const TensorView& out, float eps = 1e-6f, bool gemma = false,
                            void* stream = nullptr);

}  // namespace flashjit
