// RmsNorm: validate, choose the variant, launch one block per row.
#include <flashjit/norm.h>
#include <fmt/format.h>

#include "norm/norm_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/ops/norm/rmsnorm_spec.h"

namespace flashjit {

Status RmsNorm(Engine& engine, const TensorView& input, const TensorView& weight,
               const TensorView& out, float eps, bool gemma, void* stream) {
  using ops::CheckTensor;
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(input, "input", 2, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(weight, "weight", 1, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(out, "out", 2, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckSameDType(weight, "weight", input, "input"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckSameDType(out, "out", input, "input"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckSameShape(out, "out", input, "input"));
  FLASHJIT_RETURN_IF_ERROR(
      ops::CheckDim(weight, "weight", 0, input.shape[1], "input's hidden size"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckInnerContiguous(input, "input"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckInnerContiguous(out, "out"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckContiguous(weight, "weight"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckSameDevice(weight, "weight", input, "input"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckSameDevice(out, "out", input, "input"));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckPositive(eps, "eps"));
  const int64_t rows = input.shape[0], hidden = input.shape[1];
  if (rows == 0) return Status::Ok();
  if (hidden == 0)
    return Status::InvalidArgument("input: hidden size is 0; rmsnorm needs at least one element");
  if (rows > 0x7fffffff)
    return Status::InvalidArgument(fmt::format("input: {} rows; at most 2^31-1 supported", rows));

  const int vec =
      ops::VectorWidth(DTypeBytes(input.dtype), hidden, {input.data, weight.data, out.data},
                       {input.strides[0], out.strides[0]});
  const ops::RmsNormSpec spec = ops::ChooseRmsNorm(input.dtype, hidden, vec, gemma);
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, input.device));

  norm::RmsNormParams p{};
  p.x = input.data;
  p.weight = weight.data;
  p.out = out.data;
  p.rows = rows;
  p.hidden = hidden;
  p.x_stride = input.strides[0];
  p.out_stride = out.strides[0];
  p.eps = eps;
  runtime::LaunchConfig cfg;
  cfg.grid_x = static_cast<uint32_t>(rows);
  cfg.block_x = spec.threads;
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace flashjit
