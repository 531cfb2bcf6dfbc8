// One internal entry for every filtered-sampling, renorm and mask op: the public functions in
// sampling_api.cc fill a SamplingRequest; RunSampling validates all of it, then launches.
#pragma once

#include <flashjit/sampling.h>

#include "src/ops/sampling/sampling_spec.h"

namespace flashjit::ops {

struct SamplingRequest {
  SamplingInput input = SamplingInput::kProbs;
  SamplingFilter filter = SamplingFilter::kNone;
  SamplingOutput output = SamplingOutput::kSample;
  const char* input_name = "probs";
  TensorView in;
  TensorView out;  // samples [batch] or rows [batch, vocab]
  int32_t top_k = 0;
  float top_p = 1.f, min_p = 0.f, temperature = 1.f;
  TensorView top_k_arr, top_p_arr, min_p_arr, temperature_arr;
  SamplingOptions options;
};

Status RunSampling(Engine& engine, const SamplingRequest& r);

}  // namespace flashjit::ops
