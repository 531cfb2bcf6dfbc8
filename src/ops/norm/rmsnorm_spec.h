// The typed spec of the rmsnorm family and the choice of variant for a shape.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

struct RmsNormSpec {
  static constexpr uint32_t kFamilyId = FamilyId("rmsnorm");
  DType dtype = DType::kBF16;
  uint8_t vec = 8;  // elements per access
  uint8_t gemma = 0;
  uint8_t items = 4;  // accesses kept in registers per thread; 0 = streaming
  uint16_t threads = 256;
  uint16_t pad_ = 0;

  Result<VariantSpec> ToVariant() const;
};

// The variant for rows of `hidden` elements accessed `vec` at a time.
RmsNormSpec ChooseRmsNorm(DType dtype, int64_t hidden, int vec, bool gemma);

}  // namespace flashjit::ops
