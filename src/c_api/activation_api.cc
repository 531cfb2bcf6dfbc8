// C ABI: gated activations (flashjit/activation.h).
#include <flashjit/activation.h>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

namespace {

using ActFn = Status (*)(Engine&, const TensorView&, const TensorView&, void*);

flashjit_status RunAct(const char* fn, ActFn act, flashjit_engine* h, const DLTensor* input,
                       const DLTensor* out, void* stream) {
  return WithEngine(fn, h, [&](Engine& e) -> Status {
    TensorView x, o;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, "input", &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &o));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return act(e, x, o, stream);
  });
}

}  // namespace

extern "C" {

flashjit_status flashjit_silu_and_mul(flashjit_engine* h, const DLTensor* input,
                                      const DLTensor* out, void* stream) {
  return RunAct("flashjit_silu_and_mul", &SiluAndMul, h, input, out, stream);
}

flashjit_status flashjit_gelu_and_mul(flashjit_engine* h, const DLTensor* input,
                                      const DLTensor* out, void* stream) {
  return RunAct("flashjit_gelu_and_mul", &GeluAndMul, h, input, out, stream);
}

flashjit_status flashjit_gelu_tanh_and_mul(flashjit_engine* h, const DLTensor* input,
                                           const DLTensor* out, void* stream) {
  return RunAct("flashjit_gelu_tanh_and_mul", &GeluTanhAndMul, h, input, out, stream);
}

}  // extern "C"
