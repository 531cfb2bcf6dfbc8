// C ABI: attention-state merges (flashjit/cascade.h).
#include <flashjit/cascade.h>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

extern "C" {

flashjit_status flashjit_merge_state(flashjit_engine* h, const DLTensor* v_a, const DLTensor* s_a,
                                     const DLTensor* v_b, const DLTensor* s_b,
                                     const DLTensor* v_out, const DLTensor* s_out, void* stream) {
  return WithEngine("flashjit_merge_state", h, [&](Engine& e) -> Status {
    TensorView va, sa, vb, sb, vo, so;
    FLASHJIT_RETURN_IF_ERROR(FromDL(v_a, "v_a", &va));
    FLASHJIT_RETURN_IF_ERROR(FromDL(s_a, "s_a", &sa));
    FLASHJIT_RETURN_IF_ERROR(FromDL(v_b, "v_b", &vb));
    FLASHJIT_RETURN_IF_ERROR(FromDL(s_b, "s_b", &sb));
    FLASHJIT_RETURN_IF_ERROR(FromDL(v_out, "v_out", &vo));
    FLASHJIT_RETURN_IF_ERROR(FromDLOptional(s_out, "s_out", &so));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, va.device));
    return MergeState(e, va, sa, vb, sb, vo, so, stream);
  });
}

flashjit_status flashjit_merge_state_in_place(flashjit_engine* h, const DLTensor* v,
                                              const DLTensor* s, const DLTensor* v_other,
                                              const DLTensor* s_other, const DLTensor* mask,
                                              void* stream) {
  return WithEngine("flashjit_merge_state_in_place", h, [&](Engine& e) -> Status {
    TensorView tv, ts, to, tso, tm;
    FLASHJIT_RETURN_IF_ERROR(FromDL(v, "v", &tv));
    FLASHJIT_RETURN_IF_ERROR(FromDL(s, "s", &ts));
    FLASHJIT_RETURN_IF_ERROR(FromDL(v_other, "v_other", &to));
    FLASHJIT_RETURN_IF_ERROR(FromDL(s_other, "s_other", &tso));
    FLASHJIT_RETURN_IF_ERROR(FromDLOptional(mask, "mask", &tm));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, tv.device));
    return MergeStateInPlace(e, tv, ts, to, tso, tm, stream);
  });
}

flashjit_status flashjit_merge_states(flashjit_engine* h, const DLTensor* v, const DLTensor* s,
                                      const DLTensor* v_out, const DLTensor* s_out, void* stream) {
  return WithEngine("flashjit_merge_states", h, [&](Engine& e) -> Status {
    TensorView tv, ts, vo, so;
    FLASHJIT_RETURN_IF_ERROR(FromDL(v, "v", &tv));
    FLASHJIT_RETURN_IF_ERROR(FromDL(s, "s", &ts));
    FLASHJIT_RETURN_IF_ERROR(FromDL(v_out, "v_out", &vo));
    FLASHJIT_RETURN_IF_ERROR(FromDLOptional(s_out, "s_out", &so));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, tv.device));
    return MergeStates(e, tv, ts, vo, so, stream);
  });
}

}  // extern "C"
