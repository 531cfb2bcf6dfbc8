// Gated activations (FlashInfer's silu_and_mul, gelu_and_mul, gelu_tanh_and_mul). All run on
// the caller's stream; a bad argument returns InvalidArgument and launches nothing.
//
//   out[t, c] = act(input[t, c]) * input[t, d + c],   c < d,   fp32 math
//   silu(x) = x / (1 + e^-x);  gelu(x) = x/2 (1 + erf(x / sqrt 2));
//   gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

namespace flashjit {

// REQUIRES: input [tokens, 2 * d] and out [tokens, d], same dtype (f16 or bf16), last dimension
// contiguous (rows may be strided); out does not overlap input.
FLASHJIT_API Status SiluAndMul(Engine& engine, const TensorView& input, const TensorView& out,
                               void* stream = nullptr);
FLASHJIT_API Status GeluAndMul(Engine& engine, const TensorView& input, const TensorView& out,
                               void* stream = nullptr);
FLASHJIT_API Status GeluTanhAndMul(Engine& engine, const TensorView& input, const TensorView& out,
                                   void* stream = nullptr);

}  // namespace flashjit
