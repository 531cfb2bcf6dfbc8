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
  // 1: rows through the Hopper bulk-copy engine (templates/norm/norm_bulk.cuh; rms only, 16-byte
  // aligned rows); 2: the same machinery as a pure copy (out = x), the benchmark's ceiling.
  uint8_t bulk = 0;
  uint8_t stages = 2;  // bulk only: row buffers per block (resident grid); 1: one row per block
  uint8_t pad_ = 0;

  Result<VariantSpec> ToVariant() const;
};

// The variant for `rows` rows of `hidden` elements accessed `vec` at a time.
// Dynamic shared memory of a bulk variant for rows of `row_bytes` (0 for the others).
int64_t NormBulkSmem(const NormSpec& s, int64_t row_bytes);

// Whether bulk variant `s` can run rows of `hidden` elements of `elem_bytes` accessed `vec` at a
// time, `ndim`-D input: rms, 2-D, 16-byte accesses (x, out, strides and weight aligned), the row
// within the variant's tile and its buffers within Hopper's 227 KB of shared memory per block.
// RunNorm runs the chooser's ordinary kernel where this is false.
bool NormBulkFits(const NormSpec& s, int ndim, int64_t hidden, int vec, int elem_bytes);

NormSpec ChooseNorm(NormKind kind, DType dtype, DType wdtype, int64_t hidden, int vec, bool gemma,
                    int64_t rows);

}  // namespace flashjit::ops
