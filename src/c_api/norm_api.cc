// C ABI: normalization ops (flashjit/norm.h).
#include <flashjit/norm.h>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

extern "C" {

flashjit_status flashjit_rmsnorm(flashjit_engine* h, const DLTensor* input, const DLTensor* weight,
                                 const DLTensor* out, float eps, void* stream) {
  return WithEngine("flashjit_rmsnorm", h, [&](Engine& e) -> Status {
    TensorView x, w, o;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, "input", &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(weight, "weight", &w));
    FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &o));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return RmsNorm(e, x, w, o, eps, /*gemma=*/false, stream);
  });
}

flashjit_status flashjit_gemma_rmsnorm(flashjit_engine* h, const DLTensor* input,
                                       const DLTensor* weight, const DLTensor* out, float eps,
                                       void* stream) {
  return WithEngine("flashjit_gemma_rmsnorm", h, [&](Engine& e) -> Status {
    TensorView x, w, o;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, "input", &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(weight, "weight", &w));
    FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &o));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return GemmaRmsNorm(e, x, w, o, eps, stream);
  });
}

flashjit_status flashjit_fused_add_rmsnorm(flashjit_engine* h, const DLTensor* input,
                                           const DLTensor* residual, const DLTensor* weight,
                                           float eps, void* stream) {
  return WithEngine("flashjit_fused_add_rmsnorm", h, [&](Engine& e) -> Status {
    TensorView x, r, w;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, "input", &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(residual, "residual", &r));
    FLASHJIT_RETURN_IF_ERROR(FromDL(weight, "weight", &w));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return FusedAddRmsNorm(e, x, r, w, eps, /*gemma=*/false, stream);
  });
}

flashjit_status flashjit_gemma_fused_add_rmsnorm(flashjit_engine* h, const DLTensor* input,
                                                 const DLTensor* residual, const DLTensor* weight,
                                                 float eps, void* stream) {
  return WithEngine("flashjit_gemma_fused_add_rmsnorm", h, [&](Engine& e) -> Status {
    TensorView x, r, w;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, "input", &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(residual, "residual", &r));
    FLASHJIT_RETURN_IF_ERROR(FromDL(weight, "weight", &w));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return GemmaFusedAddRmsNorm(e, x, r, w, eps, stream);
  });
}

flashjit_status flashjit_layernorm(flashjit_engine* h, const DLTensor* input, const DLTensor* gamma,
                                   const DLTensor* beta, const DLTensor* out, float eps,
                                   void* stream) {
  return WithEngine("flashjit_layernorm", h, [&](Engine& e) -> Status {
    TensorView x, g, b, o;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, "input", &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(gamma, "gamma", &g));
    FLASHJIT_RETURN_IF_ERROR(FromDL(beta, "beta", &b));
    FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &o));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return LayerNorm(e, x, g, b, o, eps, stream);
  });
}

}  // extern "C"
