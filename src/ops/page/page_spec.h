// Typed specs of the `append_paged_kv` and `batch_positions` families.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/page.h>
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
  uint8_t resolve = 0;  // per-item form: resolve all items' pages before the first store
  uint8_t tokens = 1;   // token-tile form: each token's page resolved once per block
  uint8_t loop = 0;     // token-tile form over a resident grid, next tile loaded during stores
  uint8_t pad_[1] = {};

  Result<VariantSpec> ToVariant() const;
};

// AppendPagedKvCache (include/flashjit/page.h) with the variant's form, threads and items
// replaced by `force` (benchmarks); dtypes and vec still come from the arguments. `max_grid` > 0
// caps the loop form's grid below one resident wave (tests: many tiles per block at small sizes).
Status AppendPagedKvCacheWith(Engine& engine, const TensorView& key, const TensorView& value,
                              const TensorView& batch_indices, const TensorView& positions,
                              const TensorView& k_cache, const TensorView& v_cache,
                              const TensorView& kv_indices, const TensorView& kv_indptr,
                              const TensorView& kv_last_page_len, KvLayout layout, float k_scale,
                              float v_scale, void* stream, const AppendKvSpec* force,
                              int max_grid = 0);

struct BatchPositionsSpec {
  static constexpr uint32_t kFamilyId = FamilyId("batch_positions");
  uint32_t threads = 256;

  Result<VariantSpec> ToVariant() const;
};

}  // namespace flashjit::ops
