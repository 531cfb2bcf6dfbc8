// Bad arguments to the normalization ops: InvalidArgument naming the argument, before launch.
#include <flashjit/norm.h>

#include "tests/unit/layer_validation_util.h"

namespace flashjit::test {
namespace {

const DType bf = DType::kBF16;

TEST_CASE("norm ops reject bad shapes, dtypes, strides and eps", "[norm][validation]") {
  Engine& e = DryEngine();
  TensorView x = Fake(bf, {4, 64}), w = Fake(bf, {64}), out = Fake(bf, {4, 64});
  CHECK_INVALID(RmsNorm(e, Fake(bf, {64}), w, Fake(bf, {64})), "input");
  CHECK_INVALID(RmsNorm(e, Fake(bf, {2, 2, 2, 64}), w, Fake(bf, {2, 2, 2, 64})), "input");
  CHECK_INVALID(RmsNorm(e, Fake(DType::kF32, {4, 64}), w, out),
                "input: dtype f32 not supported; allowed: f16, bf16");
  CHECK_INVALID(RmsNorm(e, x, Fake(DType::kF16, {64}), out), "weight: dtype f16");
  CHECK_INVALID(RmsNorm(e, x, Fake(bf, {63}), out), "weight: dim 0 is 63");
  CHECK_INVALID(RmsNorm(e, x, w, Fake(bf, {4, 32})), "out: shape");
  CHECK_INVALID(RmsNorm(e, x, w, Fake(bf, {4, 4, 64})), "out");
  CHECK_INVALID(RmsNorm(e, x, w, out, 0.f), "eps");
  CHECK_INVALID(RmsNorm(e, x, w, out, -1e-6f), "eps");
  CHECK_INVALID(RmsNorm(e, x, w, out, std::numeric_limits<float>::quiet_NaN()), "eps");
  TensorView strided = x;
  strided.strides[1] = 2;
  CHECK_INVALID(RmsNorm(e, strided, w, out), "input: innermost");
  TensorView w2 = Fake(bf, {64});
  w2.strides[0] = 2;
  CHECK_INVALID(RmsNorm(e, x, w2, out), "weight: must be contiguous");
  TensorView other = out;
  other.device = 1;
  CHECK_INVALID(RmsNorm(e, x, w, other), "out: on cuda:1");
  CHECK_INVALID(RmsNorm(e, Fake(bf, {4, 0}), Fake(bf, {0}), Fake(bf, {4, 0})), "hidden size is 0");
  TensorView null_x = x;
  null_x.data = nullptr;
  CHECK_INVALID(RmsNorm(e, null_x, w, out), "input: null data");
  // 3-D QK-norm: weight is [head_dim].
  CHECK_INVALID(RmsNorm(e, Fake(bf, {4, 8, 128}), Fake(bf, {1024}), Fake(bf, {4, 8, 128})),
                "weight: dim 0 is 1024");

  CHECK_INVALID(FusedAddRmsNorm(e, x, Fake(bf, {4, 32}), w), "residual: shape");
  CHECK_INVALID(FusedAddRmsNorm(e, x, Fake(DType::kF16, {4, 64}), w), "residual: dtype");
  CHECK_INVALID(GemmaFusedAddRmsNorm(e, x, out, w, 0.f), "eps");

  CHECK_INVALID(LayerNorm(e, x, Fake(DType::kF32, {64}), Fake(bf, {64}), out), "beta: dtype");
  CHECK_INVALID(LayerNorm(e, x, Fake(DType::kF16, {64}), Fake(DType::kF16, {64}), out),
                "gamma: dtype f16 must be f32 or input's dtype bf16");
  CHECK_INVALID(LayerNorm(e, x, Fake(DType::kF32, {64}), Fake(DType::kF32, {65}), out),
                "beta: dim 0 is 65");
  CHECK_INVALID(LayerNorm(e, x, w, w, out, 0.f), "eps");
}

}  // namespace
}  // namespace flashjit::test
