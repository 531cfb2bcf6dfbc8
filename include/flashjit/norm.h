// Normalization ops (FlashInfer's rmsnorm, fused_add_rmsnorm, gemma_rmsnorm,
// gemma_fused_add_rmsnorm, layernorm). All run on the caller's stream and return before the
// kernel finishes; a bad argument returns InvalidArgument and launches nothing.
//
// Activations are fp16 or bf16 with fp32 accumulation. A "row" is the last dimension; inputs
// are [tokens, hidden] or [tokens, heads, hidden] (QK-norm: each head normalised on its own).
// The last dimension must have stride 1; tokens and heads may be strided. Any hidden size
// works: when pointers, strides and hidden are multiples of 16 bytes the kernel uses 16-byte
// accesses, otherwise narrower ones.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

namespace flashjit {

// out = input / sqrt(mean(input^2) + eps) * weight            (gemma: * (weight + 1))
// REQUIRES: input and out same shape and dtype, 2-D or 3-D; weight [hidden] contiguous, same
// dtype; eps > 0. `out` may alias `input` exactly (in place), not partially.
FLASHJIT_API Status RmsNorm(Engine& engine, const TensorView& input, const TensorView& weight,
                            const TensorView& out, float eps = 1e-6f, bool gemma = false,
                            void* stream = nullptr);

// RmsNorm with gemma = true: out = input / rms(input) * (weight + 1).
FLASHJIT_API Status GemmaRmsNorm(Engine& engine, const TensorView& input, const TensorView& weight,
                                 const TensorView& out, float eps = 1e-6f, void* stream = nullptr);

// In place, both tensors: residual = round(input + residual); input = rmsnorm(residual).
// The norm reads the residual as stored (rounded to its dtype).
// REQUIRES: input and residual same shape and dtype, 2-D or 3-D, not overlapping; weight as for
// RmsNorm; eps > 0.
FLASHJIT_API Status FusedAddRmsNorm(Engine& engine, const TensorView& input,
                                    const TensorView& residual, const TensorView& weight,
                                    float eps = 1e-6f, bool gemma = false, void* stream = nullptr);

// FusedAddRmsNorm with weight + 1.
FLASHJIT_API Status GemmaFusedAddRmsNorm(Engine& engine, const TensorView& input,
                                         const TensorView& residual, const TensorView& weight,
                                         float eps = 1e-6f, void* stream = nullptr);

// out = (input - mean) / sqrt(var + eps) * gamma + beta, with the biased variance of each row.
// REQUIRES: input and out as for RmsNorm; gamma and beta [hidden] contiguous, both f32 or both
// the input's dtype; eps > 0.
FLASHJIT_API Status LayerNorm(Engine& engine, const TensorView& input, const TensorView& gamma,
                              const TensorView& beta, const TensorView& out, float eps = 1e-6f,
                              void* stream = nullptr);

}  // namespace flashjit
