// RunNorm: checks, variant choice and launch shared by RMSNorm, fused add RMSNorm and LayerNorm.
#include "src/ops/norm/norm_run.h"

#include <fmt/format.h>

#include "norm/norm_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/ops/common/pdl.h"
#include "src/ops/norm/resident_grid.h"

namespace flashjit::ops {
namespace {

constexpr std::initializer_list<DType> kActivation = {DType::kF16, DType::kBF16};

Status CheckActivation(const TensorView& t, std::string_view name, const TensorView& input) {
  if (t.ndim != input.ndim)
    return Status::InvalidArgument(fmt::format("{}: expected {} dimensions like input, got {}",
                                               name, input.ndim, t.Describe()));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(t, name, input.ndim, kActivation));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(t, name, input, "input"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(t, name, input, "input"));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(t, name));
  return CheckSameDevice(t, name, input, "input");
}

Status CheckParam(const TensorView& t, std::string_view name, const TensorView& input,
                  bool allow_f32) {
  FLASHJIT_RETURN_IF_ERROR(allow_f32
                               ? CheckTensor(t, name, 1, {DType::kF16, DType::kBF16, DType::kF32})
                               : CheckTensor(t, name, 1, kActivation));
  if (!allow_f32) FLASHJIT_RETURN_IF_ERROR(CheckSameDType(t, name, input, "input"));
  if (allow_f32 && t.dtype != DType::kF32 && t.dtype != input.dtype)
    return Status::InvalidArgument(fmt::format("{}: dtype {} must be f32 or input's dtype {}", name,
                                               DTypeName(t.dtype), DTypeName(input.dtype)));
  FLASHJIT_RETURN_IF_ERROR(
      CheckDim(t, name, 0, input.shape[input.ndim - 1], "input's hidden size"));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(t, name));
  return CheckSameDevice(t, name, input, "input");
}

norm::NormRowLayout Layout(const TensorView& t) {
  if (t.ndim == 3) return {t.strides[0], t.strides[1]};
  return {t.strides[0], 0};
}

}  // namespace

Status RunNorm(Engine& engine, const NormArgs& a, void* stream, const NormSpec* force) {
  const TensorView& in = a.input;
  if (in.ndim != 2 && in.ndim != 3)
    return Status::InvalidArgument(fmt::format(
        "input: expected [tokens, hidden] or [tokens, heads, hidden], got {}", in.Describe()));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(in, "input", in.ndim, kActivation));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(in, "input"));
  const bool fused = a.kind == NormKind::kFusedAdd, layer = a.kind == NormKind::kLayer;
  const TensorView& out = fused ? in : a.out;
  if (fused) FLASHJIT_RETURN_IF_ERROR(CheckActivation(a.residual, "residual", in));
  if (!fused) FLASHJIT_RETURN_IF_ERROR(CheckActivation(out, "out", in));
  FLASHJIT_RETURN_IF_ERROR(CheckParam(a.weight, layer ? "gamma" : "weight", in, layer));
  if (layer) {
    FLASHJIT_RETURN_IF_ERROR(CheckParam(a.bias, "beta", in, true));
    if (a.bias.dtype != a.weight.dtype)
      return Status::InvalidArgument(fmt::format("beta: dtype {} must equal gamma's dtype {}",
                                                 DTypeName(a.bias.dtype),
                                                 DTypeName(a.weight.dtype)));
  }
  FLASHJIT_RETURN_IF_ERROR(CheckPositive(a.eps, "eps"));

  const int64_t hidden = in.shape[in.ndim - 1];
  const int64_t heads = in.ndim == 3 ? in.shape[1] : 1;
  const int64_t rows = in.shape[0] * heads;
  if (rows == 0) return Status::Ok();
  if (hidden == 0)
    return Status::InvalidArgument("input: hidden size is 0; a norm needs at least one element");
  if (rows > 0x7fffffff || in.shape[0] > 0x7fffffff)
    return Status::InvalidArgument(fmt::format("input: {} rows; at most 2^31-1 supported", rows));

  const norm::NormRowLayout lx = Layout(in), lo = Layout(out);
  const norm::NormRowLayout lr = fused ? Layout(a.residual) : norm::NormRowLayout{0, 0};
  int vec = VectorWidth(DTypeBytes(in.dtype), hidden,
                        {in.data, out.data, fused ? a.residual.data : nullptr},
                        {lx.stride_token, lx.stride_head, lo.stride_token, lo.stride_head,
                         lr.stride_token, lr.stride_head});
  const int wbytes = DTypeBytes(a.weight.dtype);
  auto aligned = [&](const void* p) {
    return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(vec * wbytes) == 0;
  };
  while (vec > 1 && !(aligned(a.weight.data) && (!layer || aligned(a.bias.data)))) vec /= 2;

  NormSpec spec = ChooseNorm(a.kind, in.dtype, a.weight.dtype, hidden, vec, a.gemma, rows);
  if (force) {
    const NormSpec chosen = spec;
    spec = *force;
    spec.dtype = chosen.dtype;
    spec.wdtype = chosen.wdtype;
    spec.kind = chosen.kind;
    spec.vec = chosen.vec;
    spec.gemma = chosen.gemma;
    if (spec.threads > 32) spec.rows = 1;
  }
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, in.device));

  norm::NormParams p{};
  p.x = in.data;
  p.residual = fused ? a.residual.data : nullptr;
  p.weight = a.weight.data;
  p.bias = layer ? a.bias.data : nullptr;
  p.out = out.data;
  p.rows = rows;
  p.hidden = hidden;
  p.heads = heads;
  p.x_layout = lx;
  p.out_layout = lo;
  p.residual_layout = lr;
  p.eps = a.eps;
  runtime::LaunchConfig cfg;
  cfg.block_x = spec.threads * spec.rows;
  cfg.programmatic = LayerOpPdl(engine, in.device);
  const int64_t groups = (rows + spec.rows - 1) / spec.rows;
  cfg.grid_x = spec.prefetch ? ResidentGrid(*kernel, 0, static_cast<int>(cfg.block_x), groups)
                             : static_cast<uint32_t>(groups);
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace flashjit::ops
