// The typed spec of the `merge_state` family.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

struct MergeStateSpec {
  static constexpr uint32_t kFamilyId = FamilyId("merge_state");
  DType dtype = DType::kBF16;
  uint8_t vec = 8;
  uint8_t lanes = 16;
  uint8_t batch = 4;
  uint8_t chunks = 1;  // vectors per state a lane loads
  uint8_t pad_ = 0;
  uint16_t threads = 256;

  Result<VariantSpec> ToVariant() const;
};

}  // namespace flashjit::ops
