// Params of the normalization kernels: plain data shared by host and device.
#pragma once

#include "common/config.cuh"

namespace flashjit::norm {

// Legacy params of the `rmsnorm` family (kept so that its specs stay valid).
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

// Params of the `norm` family. A row r is (token r / heads, head r % heads); its first element
// sits at base + token * stride_token + head * stride_head (elements). 2-D tensors: heads = 1.
struct NormRowLayout {
  int64_t stride_token;
  int64_t stride_head;
};

struct NormParams {
  const void* x;       // rms/layer: input; fused_add: input (read), overwritten with the output
  void* residual;      // fused_add: read, overwritten with x + residual; else null
  const void* weight;  // [hidden] (gamma for layernorm)
  const void* bias;    // layernorm: beta [hidden]; else null
  void* out;           // rms/layer: output rows; fused_add: same as x
  int64_t rows;        // tokens * heads
  int64_t hidden;      // elements per row
  int64_t heads;       // rows per token (3-D QK-norm), 1 for 2-D
  NormRowLayout x_layout, out_layout, residual_layout;
  float eps;
  uint32_t pad_;
};
FLASHJIT_CHECK_PARAMS(NormParams, 120);

}  // namespace flashjit::norm
