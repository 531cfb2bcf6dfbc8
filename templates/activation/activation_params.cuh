// Params of the gated activation kernels: plain data shared by host and device.
#pragma once

#include "common/config.cuh"

namespace flashjit::activation {

// out[r, c] = act(in[r, c]) * in[r, d + c]  for c < d.
struct ActivationParams {
  const void* in;  // [rows, 2 * d], row stride in_stride (elements)
  void* out;       // [rows, d], row stride out_stride
  int64_t rows;
  int64_t d;
  int64_t in_stride;
  int64_t out_stride;
  int64_t col_blocks;  // blocks per row
};
FLASHJIT_CHECK_PARAMS(ActivationParams, 56);

}  // namespace flashjit::activation
