// The public sampling functions: each names its input and filter and forwards to RunSampling.
#include <flashjit/sampling.h>

#include "src/ops/sampling/sampling_run.h"

namespace flashjit {

using ops::SamplingFilter;
using ops::SamplingInput;
using ops::SamplingOutput;
using ops::SamplingRequest;

namespace {

SamplingRequest Request(SamplingInput input, const TensorView& in, const TensorView& out,
                        SamplingFilter filter, SamplingOutput output) {
  SamplingRequest r;
  r.input = input;
  r.input_name = input == SamplingInput::kProbs ? "probs" : "logits";
  r.in = in;
  r.out = out;
  r.filter = filter;
  r.output = output;
  return r;
}

SamplingFilter JointFilter(FilterApplyOrder order) {
  return order == FilterApplyOrder::kJoint ? SamplingFilter::kJoint : SamplingFilter::kTopKFirst;
}

}  // namespace

Status Softmax(Engine& engine, const TensorView& logits, const TensorView& out, float temperature,
               const TensorView& temperature_arr, void* stream) {
  SamplingRequest r =
      Request(SamplingInput::kLogits, logits, out, SamplingFilter::kNone, SamplingOutput::kProbs);
  r.temperature = temperature;
  r.temperature_arr = temperature_arr;
  r.options.stream = stream;
  return ops::RunSampling(engine, r);
}

Status SamplingFromProbs(Engine& engine, const TensorView& probs, const TensorView& samples,
                         const SamplingOptions& options) {
  SamplingRequest r = Request(SamplingInput::kProbs, probs, samples, SamplingFilter::kNone,
                              SamplingOutput::kSample);
  r.options = options;
  return ops::RunSampling(engine, r);
}

Status SamplingFromLogits(Engine& engine, const TensorView& logits, const TensorView& samples,
                          const SamplingOptions& options) {
  SamplingRequest r = Request(SamplingInput::kLogits, logits, samples, SamplingFilter::kNone,
                              SamplingOutput::kSample);
  r.options = options;
  return ops::RunSampling(engine, r);
}

Status TopKSamplingFromProbs(Engine& engine, const TensorView& probs, const TensorView& samples,
                             int top_k, const TensorView& top_k_arr,
                             const SamplingOptions& options) {
  SamplingRequest r = Request(SamplingInput::kProbs, probs, samples, SamplingFilter::kTopK,
                              SamplingOutput::kSample);
  r.top_k = top_k;
  r.top_k_arr = top_k_arr;
  r.options = options;
  return ops::RunSampling(engine, r);
}

Status TopPSamplingFromProbs(Engine& engine, const TensorView& probs, const TensorView& samples,
                             float top_p, const TensorView& top_p_arr,
                             const SamplingOptions& options) {
  SamplingRequest r = Request(SamplingInput::kProbs, probs, samples, SamplingFilter::kTopP,
                              SamplingOutput::kSample);
  r.top_p = top_p;
  r.top_p_arr = top_p_arr;
  r.options = options;
  return ops::RunSampling(engine, r);
}

Status MinPSamplingFromProbs(Engine& engine, const TensorView& probs, const TensorView& samples,
                             float min_p, const TensorView& min_p_arr,
                             const SamplingOptions& options) {
  SamplingRequest r = Request(SamplingInput::kProbs, probs, samples, SamplingFilter::kMinP,
                              SamplingOutput::kSample);
  r.min_p = min_p;
  r.min_p_arr = min_p_arr;
  r.options = options;
  return ops::RunSampling(engine, r);
}

Status TopKTopPSamplingFromProbs(Engine& engine, const TensorView& probs, const TensorView& samples,
                                 int top_k, const TensorView& top_k_arr, float top_p,
                                 const TensorView& top_p_arr, FilterApplyOrder order,
                                 const SamplingOptions& options) {
  SamplingRequest r =
      Request(SamplingInput::kProbs, probs, samples, JointFilter(order), SamplingOutput::kSample);
  r.top_k = top_k;
  r.top_k_arr = top_k_arr;
  r.top_p = top_p;
  r.top_p_arr = top_p_arr;
  r.options = options;
  return ops::RunSampling(engine, r);
}

Status TopKTopPSamplingFromLogits(Engine& engine, const TensorView& logits,
                                  const TensorView& samples, int top_k, const TensorView& top_k_arr,
                                  float top_p, const TensorView& top_p_arr, FilterApplyOrder order,
                                  const SamplingOptions& options) {
  SamplingRequest r =
      Request(SamplingInput::kLogits, logits, samples, JointFilter(order), SamplingOutput::kSample);
  r.top_k = top_k;
  r.top_k_arr = top_k_arr;
  r.top_p = top_p;
  r.top_p_arr = top_p_arr;
  r.options = options;
  return ops::RunSampling(engine, r);
}

Status TopKRenormProbs(Engine& engine, const TensorView& probs, const TensorView& out, int top_k,
                       const TensorView& top_k_arr, void* stream) {
  SamplingRequest r =
      Request(SamplingInput::kProbs, probs, out, SamplingFilter::kTopK, SamplingOutput::kProbs);
  r.top_k = top_k;
  r.top_k_arr = top_k_arr;
  r.options.stream = stream;
  return ops::RunSampling(engine, r);
}

Status TopPRenormProbs(Engine& engine, const TensorView& probs, const TensorView& out, float top_p,
                       const TensorView& top_p_arr, void* stream) {
  SamplingRequest r =
      Request(SamplingInput::kProbs, probs, out, SamplingFilter::kTopP, SamplingOutput::kProbs);
  r.top_p = top_p;
  r.top_p_arr = top_p_arr;
  r.options.stream = stream;
  return ops::RunSampling(engine, r);
}

Status TopKMaskLogits(Engine& engine, const TensorView& logits, const TensorView& out, int top_k,
                      const TensorView& top_k_arr, void* stream) {
  SamplingRequest r = Request(SamplingInput::kLogits, logits, out, SamplingFilter::kTopK,
                              SamplingOutput::kMaskLogits);
  r.top_k = top_k;
  r.top_k_arr = top_k_arr;
  r.options.stream = stream;
  return ops::RunSampling(engine, r);
}

}  // namespace flashjit
