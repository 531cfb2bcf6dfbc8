// The typed spec of the `norm` family (RMSNorm, fused add + RMSNorm, LayerNorm) and the choice
// of variant for a shape.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

enum class NormKind : uint8_t { kRms = 0, kFusedAdd = 1, kLayer = 2 };

struct NormSpec {
  static constexpr uint32_t kFamilyId = FamilyId("norm");
  DType dtype = DType::kBF16;
  DType wdtype = DType::kBF16;  // weight (and bias) dtype
  NormKind kind = NormKind::kRms;
  uint8_t vec = 8;    // elements per access
  uint8_t items = 4;  // accesses kept in registers per thread; 0 = streaming
  uint8_t rows = 1;   // rows per block (only with threads <= 32)
  uint8_t gemma = 0;
  uint8_t streaming = 1;    // evict-first hints
  uint16_t threads = 256;   // threads per row
  uint8_t prefetch = 1;     // load the next row group early (grid of resident blocks)
  uint8_t grid_stride = 0;  // with prefetch = 0: the resident-grid loop (one block per row)
  uint8_t wprefetch = 0;    // one-pass kernel: weights prefetched into L1 before the reduction
  uint8_t minb = 0;  // launch bounds: at least this many blocks per SM (0: none, the compiler's)
  uint8_t pad_[2] = {};

  Result<VariantSpec> ToVariant() const;
};

// The variant for `rows` rows of `hidden` elements accessed `vec` at a time.
NormSpec ChooseNorm(NormKind kind, DType dtype, DType wdtype, int64_t hidden, int vec, bool gemma,
                    int64_t rows);

}  // namespace flashjit::ops
