// Gated activations: validate, choose the variant, launch.
#include <flashjit/activation.h>
#include <fmt/format.h>

#include "activation/activation_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/ops/activation/activation_spec.h"
#include "src/ops/common/pdl.h"

namespace flashjit {
namespace {

int NextPow2(int64_t x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

Status RunGated(Engine& engine, ops::ActKind act, const TensorView& input, const TensorView& out,
                void* stream) {
  using namespace ops;
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(input, "input", 2, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(out, "out", 2, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(out, "out", input, "input"));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(input, "input"));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(out, "out"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(out, "out", input, "input"));
  if (input.shape[1] % 2 != 0)
    return Status::InvalidArgument(
        fmt::format("input: last dimension {} must be even ([tokens, 2 * d])", input.shape[1]));
  const int64_t rows = input.shape[0], d = input.shape[1] / 2;
  FLASHJIT_RETURN_IF_ERROR(CheckDim(out, "out", 0, rows, "input's token count"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(out, "out", 1, d, "half of input's last dimension"));
  if (rows == 0 || d == 0) return Status::Ok();

  ActivationSpec spec;
  spec.dtype = input.dtype;
  spec.act = act;
  spec.vec = static_cast<uint8_t>(VectorWidth(DTypeBytes(input.dtype), d, {input.data, out.data},
                                              {input.strides[0], out.strides[0]}));
  const int64_t accesses = (d + spec.vec - 1) / spec.vec;
  spec.items = accesses >= 512 ? 2 : 1;
  int threads = NextPow2((accesses + spec.items - 1) / spec.items);
  spec.threads = static_cast<uint16_t>(threads < 32 ? 32 : (threads > 128 ? 128 : threads));
  const int64_t per_block = int64_t{spec.threads} * spec.items * spec.vec;
  const int64_t col_blocks = (d + per_block - 1) / per_block;
  if (rows * col_blocks > 0x7fffffff)
    return Status::InvalidArgument(
        fmt::format("input: {} x {} is too large for one launch", rows, input.shape[1]));
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, input.device));

  activation::ActivationParams p{};
  p.in = input.data;
  p.out = out.data;
  p.rows = rows;
  p.d = d;
  p.in_stride = input.strides[0];
  p.out_stride = out.strides[0];
  p.col_blocks = col_blocks;
  runtime::LaunchConfig cfg;
  cfg.grid_x = static_cast<uint32_t>(rows * col_blocks);
  cfg.block_x = spec.threads;
  cfg.programmatic = LayerOpPdl(engine, input.device);
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace

Status SiluAndMul(Engine& engine, const TensorView& input, const TensorView& out, void* stream) {
  return RunGated(engine, ops::ActKind::kSilu, input, out, stream);
}

Status GeluAndMul(Engine& engine, const TensorView& input, const TensorView& out, void* stream) {
  return RunGated(engine, ops::ActKind::kGelu, input, out, stream);
}

Status GeluTanhAndMul(Engine& engine, const TensorView& input, const TensorView& out,
                      void* stream) {
  return RunGated(engine, ops::ActKind::kGeluTanh, input, out, stream);
}

}  // namespace flashjit
