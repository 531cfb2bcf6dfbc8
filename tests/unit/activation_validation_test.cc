// Bad arguments to the gated activations: InvalidArgument naming the argument, before launch.
#include <flashjit/activation.h>

#include "tests/unit/layer_validation_util.h"

namespace flashjit::test {
namespace {

const DType bf = DType::kBF16;

TEST_CASE("gated activations reject bad shapes and dtypes", "[activation][validation]") {
  Engine& e = DryEngine();
  CHECK_INVALID(SiluAndMul(e, Fake(bf, {4, 63}), Fake(bf, {4, 31})), "must be even");
  CHECK_INVALID(SiluAndMul(e, Fake(bf, {4, 64}), Fake(bf, {4, 64})), "out: dim 1 is 64");
  CHECK_INVALID(GeluAndMul(e, Fake(bf, {4, 64}), Fake(bf, {5, 32})), "out: dim 0 is 5");
  CHECK_INVALID(GeluTanhAndMul(e, Fake(bf, {4, 64}), Fake(DType::kF16, {4, 32})), "out: dtype");
  CHECK_INVALID(SiluAndMul(e, Fake(DType::kF32, {4, 64}), Fake(DType::kF32, {4, 32})),
                "input: dtype f32");
  CHECK_INVALID(SiluAndMul(e, Fake(bf, {64}), Fake(bf, {32})), "input: expected 2");
  TensorView s = Fake(bf, {4, 64});
  s.strides[1] = 2;
  CHECK_INVALID(SiluAndMul(e, s, Fake(bf, {4, 32})), "input: innermost");
  TensorView o = Fake(bf, {4, 32});
  o.device = 3;
  CHECK_INVALID(SiluAndMul(e, Fake(bf, {4, 64}), o), "out: on cuda:3");
}

}  // namespace
}  // namespace flashjit::test
