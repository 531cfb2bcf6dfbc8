// Typed specs of the `append_paged_kv` and `batch_positions` families.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

struct AppendKvSpec {
  static constexpr uint32_t kFamilyId = FamilyId("append_paged_kv");
  DType dtype = DType::kBF16;
  DType cache_dtype = DType::kBF16;
  uint8_t vec = 8;
  uint8_t items = 2;
  uint16_t threads = 256;
  uint8_t resolve = 0;  // resolve all items' pages before the first store
  uint8_t pad_[3] = {};

  Result<VariantSpec> ToVariant() const;
};

struct BatchPositionsSpec {
  static constexpr uint32_t kFamilyId = FamilyId("batch_positions");
  uint32_t threads = 256;

  Result<VariantSpec> ToVariant() const;
};

}  // namespace flashjit::ops
