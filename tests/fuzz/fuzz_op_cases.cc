#include "tests/fuzz/fuzz_op_cases.h"

#include <flashjit/norm.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace flashjit::fuzz {
namespace {

int64_t DrawExtent(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return in.ConsumeIntegralInRange<int64_t>(0, 8);
    case 1:
      return in.ConsumeIntegralInRange<int64_t>(0, 70000);
    case 2:
      return in.ConsumeIntegralInRange<int64_t>(-4, 4);
    default:
      return in.ConsumeIntegral<int64_t>();
  }
}

}  // namespace

TensorView DrawTensor(FuzzedDataProvider& in) {
  TensorView t;
  uint8_t dtype = in.ConsumeIntegral<uint8_t>();
  std::memcpy(&t.dtype, &dtype, 1);  // out-of-range enum values too: callers can pass them
  t.ndim = in.ConsumeIntegralInRange<int>(-1, 8);
  for (int d = 0; d < TensorView::kMaxDims; ++d) {
    t.shape[d] = DrawExtent(in);
    t.strides[d] = DrawExtent(in);
  }
  uintptr_t p = in.ConsumeBool() ? in.ConsumeIntegral<uintptr_t>()
                                 : (in.ConsumeIntegralInRange<uintptr_t>(0, 64) << 4);
  t.data = reinterpret_cast<void*>(p);
  t.device = in.ConsumeBool() ? 0 : in.ConsumeIntegral<int>();
  return t;
}

float DrawFloat(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0:
      return 1e-6f;
    case 1:
      return std::numeric_limits<float>::quiet_NaN();
    case 2:
      return std::numeric_limits<float>::infinity();
    case 3:
      return -in.ConsumeFloatingPoint<float>();
    default:
      return in.ConsumeFloatingPoint<float>();
  }
}

const std::vector<OpCase>& OpCases() {
  static const std::vector<OpCase> cases = {
      {"rmsnorm",
       [](Engine& e, FuzzedDataProvider& in) {
         TensorView x = DrawTensor(in), w = DrawTensor(in);
         TensorView out = in.ConsumeBool() ? x : DrawTensor(in);
         float eps = DrawFloat(in);
         return RmsNorm(e, x, w, out, eps, in.ConsumeBool());
       }},
      {"fused_add_rmsnorm",
       [](Engine& e, FuzzedDataProvider& in) {
         TensorView x = DrawTensor(in), r = DrawTensor(in), w = DrawTensor(in);
         float eps = DrawFloat(in);
         return FusedAddRmsNorm(e, x, r, w, eps, in.ConsumeBool());
       }},
      {"layernorm",
       [](Engine& e, FuzzedDataProvider& in) {
         TensorView x = DrawTensor(in), g = DrawTensor(in), b = DrawTensor(in);
         TensorView out = in.ConsumeBool() ? x : DrawTensor(in);
         return LayerNorm(e, x, g, b, out, DrawFloat(in));
       }},
  };
  return cases;
}

}  // namespace flashjit::fuzz
