// The public normalization ops: thin mappings onto RunNorm.
#include <flashjit/norm.h>

#include "src/ops/norm/norm_run.h"

namespace flashjit {

using ops::NormArgs;
using ops::NormKind;

Status RmsNorm(Engine& engine, const TensorView& input, const TensorView& weight,
               const TensorView& out, float eps, bool gemma, void* stream) {
  NormArgs a;
  a.kind = NormKind::kRms;
  a.gemma = gemma;
  a.input = input;
  a.weight = weight;
  a.out = out;
  a.eps = eps;
  return ops::RunNorm(engine, a, stream);
}

Status GemmaRmsNorm(Engine& engine, const TensorView& input, const TensorView& weight,
                    const TensorView& out, float eps, void* stream) {
  return RmsNorm(engine, input, weight, out, eps, /*gemma=*/true, stream);
}

Status FusedAddRmsNorm(Engine& engine, const TensorView& input, const TensorView& residual,
                       const TensorView& weight, float eps, bool gemma, void* stream) {
  NormArgs a;
  a.kind = NormKind::kFusedAdd;
  a.gemma = gemma;
  a.input = input;
  a.residual = residual;
  a.weight = weight;
  a.eps = eps;
  return ops::RunNorm(engine, a, stream);
}

Status GemmaFusedAddRmsNorm(Engine& engine, const TensorView& input, const TensorView& residual,
                            const TensorView& weight, float eps, void* stream) {
  return FusedAddRmsNorm(engine, input, residual, weight, eps, /*gemma=*/true, stream);
}

Status LayerNorm(Engine& engine, const TensorView& input, const TensorView& gamma,
                 const TensorView& beta, const TensorView& out, float eps, void* stream) {
  NormArgs a;
  a.kind = NormKind::kLayer;
  a.input = input;
  a.weight = gamma;
  a.bias = beta;
  a.out = out;
  a.eps = eps;
  return ops::RunNorm(engine, a, stream);
}

}  // namespace flashjit
