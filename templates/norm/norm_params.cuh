// Params of the normalization kernels: plain data shared by host and device.
#pragma once

#include "common/config.cuh"

namespace flashjit::norm {

// out[r, :] = x[r, :] / rms(x[r, :]) * (w + (gemma ? 1 : 0)), rows of `hidden` elements.
struct RmsNormParams {
  const void* x;       // [rows, hidden], row stride x_stride (elements)
  const void* weight;  // [hidden], contiguous
  void* out;           // [rows, hidden], row stride out_stride
  int64_t rows;
  int64_t hidden;
  int64_t x_stride;
  int64_t out_stride;
  float eps;
  uint32_t pad_;
};
FLASHJIT_CHECK_PARAMS(RmsNormParams, 64);

}  // namespace flashjit::norm
