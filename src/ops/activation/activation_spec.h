// The typed spec of the `gated_activation` family.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

enum class ActKind : uint8_t { kSilu = 0, kGelu = 1, kGeluTanh = 2 };

struct ActivationSpec {
  static constexpr uint32_t kFamilyId = FamilyId("gated_activation");
  DType dtype = DType::kBF16;
  ActKind act = ActKind::kSilu;
  uint8_t vec = 8;
  uint8_t items = 2;
  uint16_t threads = 128;
  uint16_t pad_ = 0;

  Result<VariantSpec> ToVariant() const;
};

}  // namespace flashjit::ops
