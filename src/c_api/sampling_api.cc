// C ABI: sampling (flashjit/sampling.h).
#include <flashjit/sampling.h>
#include <fmt/format.h>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

namespace {

Status ToSampling(const flashjit_sampling_args* a, void* stream, SamplingOptions* o) {
  o->stream = stream;
  if (!a) return Status::Ok();
  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(a->indices, "indices", &o->indices));
  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(a->valid, "valid", &o->valid));
  o->rng.seed = a->seed;
  o->rng.offset = a->offset;
  o->rng.seed_device = a->seed_device;
  o->rng.offset_device = a->offset_device;
  return Status::Ok();
}

Result<FilterApplyOrder> ToOrder(flashjit_filter_apply_order order) {
  switch (order) {
    case FLASHJIT_FILTER_TOP_K_FIRST:
      return FilterApplyOrder::kTopKFirst;
    case FLASHJIT_FILTER_JOINT:
      return FilterApplyOrder::kJoint;
  }
  return Status::InvalidArgument(
      fmt::format("order = {}: allowed FLASHJIT_FILTER_TOP_K_FIRST (0), FLASHJIT_FILTER_JOINT (1)",
                  static_cast<int>(order)));
}

// input + samples + the shared options, then `run`.
template <class F>
flashjit_status Sample(const char* fn, flashjit_engine* h, const DLTensor* input,
                       const char* input_name, const DLTensor* samples,
                       const flashjit_sampling_args* args, void* stream, F&& run) {
  return WithEngine(fn, h, [&](Engine& e) -> Status {
    TensorView x, s;
    SamplingOptions o;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, input_name, &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(samples, "samples", &s));
    FLASHJIT_RETURN_IF_ERROR(ToSampling(args, stream, &o));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return run(e, x, s, o);
  });
}

// input + out + an optional per-row parameter, then `run`.
template <class F>
flashjit_status Filter(const char* fn, flashjit_engine* h, const DLTensor* input,
                       const char* input_name, const DLTensor* out, const DLTensor* arr,
                       const char* arr_name, void* stream, F&& run) {
  return WithEngine(fn, h, [&](Engine& e) -> Status {
    TensorView x, o, a;
    FLASHJIT_RETURN_IF_ERROR(FromDL(input, input_name, &x));
    FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &o));
    FLASHJIT_RETURN_IF_ERROR(FromDLOptional(arr, arr_name, &a));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, x.device));
    return run(e, x, o, a);
  });
}

}  // namespace

extern "C" {

flashjit_status flashjit_softmax(flashjit_engine* h, const DLTensor* logits, const DLTensor* out,
                                 float temperature, const DLTensor* temperature_arr, void* stream) {
  return Filter("flashjit_softmax", h, logits, "logits", out, temperature_arr, "temperature_arr",
                stream, [&](Engine& e, auto& x, auto& o, auto& a) {
                  return Softmax(e, x, o, temperature, a, stream);
                });
}

flashjit_status flashjit_sampling_from_probs(flashjit_engine* h, const DLTensor* probs,
                                             const DLTensor* samples,
                                             const flashjit_sampling_args* args, void* stream) {
  return Sample(
      "flashjit_sampling_from_probs", h, probs, "probs", samples, args, stream,
      [&](Engine& e, auto& x, auto& s, auto& o) { return SamplingFromProbs(e, x, s, o); });
}

flashjit_status flashjit_sampling_from_logits(flashjit_engine* h, const DLTensor* logits,
                                              const DLTensor* samples,
                                              const flashjit_sampling_args* args, void* stream) {
  return Sample(
      "flashjit_sampling_from_logits", h, logits, "logits", samples, args, stream,
      [&](Engine& e, auto& x, auto& s, auto& o) { return SamplingFromLogits(e, x, s, o); });
}

flashjit_status flashjit_top_k_sampling_from_probs(flashjit_engine* h, const DLTensor* probs,
                                                   const DLTensor* samples, int top_k,
                                                   const DLTensor* top_k_arr,
                                                   const flashjit_sampling_args* args,
                                                   void* stream) {
  return Sample("flashjit_top_k_sampling_from_probs", h, probs, "probs", samples, args, stream,
                [&](Engine& e, auto& x, auto& s, auto& o) -> Status {
                  TensorView k;
                  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(top_k_arr, "top_k_arr", &k));
                  return TopKSamplingFromProbs(e, x, s, top_k, k, o);
                });
}

flashjit_status flashjit_top_p_sampling_from_probs(flashjit_engine* h, const DLTensor* probs,
                                                   const DLTensor* samples, float top_p,
                                                   const DLTensor* top_p_arr,
                                                   const flashjit_sampling_args* args,
                                                   void* stream) {
  return Sample("flashjit_top_p_sampling_from_probs", h, probs, "probs", samples, args, stream,
                [&](Engine& e, auto& x, auto& s, auto& o) -> Status {
                  TensorView p;
                  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(top_p_arr, "top_p_arr", &p));
                  return TopPSamplingFromProbs(e, x, s, top_p, p, o);
                });
}

flashjit_status flashjit_min_p_sampling_from_probs(flashjit_engine* h, const DLTensor* probs,
                                                   const DLTensor* samples, float min_p,
                                                   const DLTensor* min_p_arr,
                                                   const flashjit_sampling_args* args,
                                                   void* stream) {
  return Sample("flashjit_min_p_sampling_from_probs", h, probs, "probs", samples, args, stream,
                [&](Engine& e, auto& x, auto& s, auto& o) -> Status {
                  TensorView p;
                  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(min_p_arr, "min_p_arr", &p));
                  return MinPSamplingFromProbs(e, x, s, min_p, p, o);
                });
}

flashjit_status flashjit_top_k_top_p_sampling_from_probs(
    flashjit_engine* h, const DLTensor* probs, const DLTensor* samples, int top_k,
    const DLTensor* top_k_arr, float top_p, const DLTensor* top_p_arr,
    flashjit_filter_apply_order order, const flashjit_sampling_args* args, void* stream) {
  return Sample("flashjit_top_k_top_p_sampling_from_probs", h, probs, "probs", samples, args,
                stream, [&](Engine& e, auto& x, auto& s, auto& o) -> Status {
                  TensorView k, p;
                  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(top_k_arr, "top_k_arr", &k));
                  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(top_p_arr, "top_p_arr", &p));
                  FLASHJIT_ASSIGN_OR_RETURN(FilterApplyOrder ord, ToOrder(order));
                  return TopKTopPSamplingFromProbs(e, x, s, top_k, k, top_p, p, ord, o);
                });
}

flashjit_status flashjit_top_k_top_p_sampling_from_logits(
    flashjit_engine* h, const DLTensor* logits, const DLTensor* samples, int top_k,
    const DLTensor* top_k_arr, float top_p, const DLTensor* top_p_arr,
    flashjit_filter_apply_order order, const flashjit_sampling_args* args, void* stream) {
  return Sample("flashjit_top_k_top_p_sampling_from_logits", h, logits, "logits", samples, args,
                stream, [&](Engine& e, auto& x, auto& s, auto& o) -> Status {
                  TensorView k, p;
                  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(top_k_arr, "top_k_arr", &k));
                  FLASHJIT_RETURN_IF_ERROR(FromDLOptional(top_p_arr, "top_p_arr", &p));
                  FLASHJIT_ASSIGN_OR_RETURN(FilterApplyOrder ord, ToOrder(order));
                  return TopKTopPSamplingFromLogits(e, x, s, top_k, k, top_p, p, ord, o);
                });
}

flashjit_status flashjit_top_k_renorm_probs(flashjit_engine* h, const DLTensor* probs,
                                            const DLTensor* out, int top_k,
                                            const DLTensor* top_k_arr, void* stream) {
  return Filter("flashjit_top_k_renorm_probs", h, probs, "probs", out, top_k_arr, "top_k_arr",
                stream, [&](Engine& e, auto& x, auto& o, auto& a) {
                  return TopKRenormProbs(e, x, o, top_k, a, stream);
                });
}

flashjit_status flashjit_top_p_renorm_probs(flashjit_engine* h, const DLTensor* probs,
                                            const DLTensor* out, float top_p,
                                            const DLTensor* top_p_arr, void* stream) {
  return Filter("flashjit_top_p_renorm_probs", h, probs, "probs", out, top_p_arr, "top_p_arr",
                stream, [&](Engine& e, auto& x, auto& o, auto& a) {
                  return TopPRenormProbs(e, x, o, top_p, a, stream);
                });
}

flashjit_status flashjit_top_k_mask_logits(flashjit_engine* h, const DLTensor* logits,
                                           const DLTensor* out, int top_k,
                                           const DLTensor* top_k_arr, void* stream) {
  return Filter("flashjit_top_k_mask_logits", h, logits, "logits", out, top_k_arr, "top_k_arr",
                stream, [&](Engine& e, auto& x, auto& o, auto& a) {
                  return TopKMaskLogits(e, x, o, top_k, a, stream);
                });
}

flashjit_status flashjit_chain_speculative_sampling(flashjit_engine* h, const DLTensor* draft_probs,
                                                    const DLTensor* draft_token_ids,
                                                    const DLTensor* target_probs,
                                                    const DLTensor* output_token_ids,
                                                    const DLTensor* accepted_token_num,
                                                    const DLTensor* emitted_draft_token_num,
                                                    uint64_t seed, uint64_t offset, void* stream) {
  return WithEngine("flashjit_chain_speculative_sampling", h, [&](Engine& e) -> Status {
    TensorView dp, dt, tp, out, acc, emi;
    FLASHJIT_RETURN_IF_ERROR(FromDL(draft_probs, "draft_probs", &dp));
    FLASHJIT_RETURN_IF_ERROR(FromDL(draft_token_ids, "draft_token_ids", &dt));
    FLASHJIT_RETURN_IF_ERROR(FromDL(target_probs, "target_probs", &tp));
    FLASHJIT_RETURN_IF_ERROR(FromDL(output_token_ids, "output_token_ids", &out));
    FLASHJIT_RETURN_IF_ERROR(FromDLOptional(accepted_token_num, "accepted_token_num", &acc));
    FLASHJIT_RETURN_IF_ERROR(
        FromDLOptional(emitted_draft_token_num, "emitted_draft_token_num", &emi));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, dp.device));
    SamplingRng rng;
    rng.seed = seed;
    rng.offset = offset;
    return ChainSpeculativeSampling(e, dp, dt, tp, out, acc, emi, rng, stream);
  });
}

}  // extern "C"
