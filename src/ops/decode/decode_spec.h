// The typed spec of the decode family and the choice of variant for a problem.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/tensor.h>

#include <cstdint>

#include "src/ops/common/check.h"

namespace flashjit::ops {

struct DecodeSpec {
  static constexpr uint32_t kFamilyId = FamilyId("decode");
  DType q_dtype = DType::kBF16;   // q, out, and the tensor-core type
  DType kv_dtype = DType::kBF16;  // q_dtype, or fp8 (e4m3 / e5m2)
  uint16_t head_dim = 128;
  uint8_t stages = 3;  // cp.async pipeline depth, in tiles of 64 keys
  uint8_t soft_cap = 0;
  uint8_t alibi = 0;
  uint8_t rope = 0;
  uint8_t stamps = 0;      // diagnostic: per-CTA timestamps into DecodeParams::stamps
  uint8_t fast_index = 0;  // item and head tile from the launch's divisors (DecodeFastIndex)

  Result<VariantSpec> ToVariant() const;
};

// Diagnostic knob FLASHJIT_DECODE_STAMPS=1: every decode attention launch takes the stamps
// variant, which writes per-CTA timestamps (DecodeParams::stamps, kDecodeStampWords words per
// CTA) into the buffer given by SetDecodeStampsBuffer (launches fail without one).
bool DecodeStamps();
// Tests: 1 / 0 force the stamps variant on / off for plans made from now on; < 0 restores the
// knob.
void SetDecodeStampsForTesting(int mode);
// Whether a decode CTA finds its work item and head tile from divisors the launch computed
// (DecodeParams::grid_item_div: no division at run time, no branch on the launch form) and reads
// the loader's kernel parameters before its work item (session 11). Knob
// FLASHJIT_DECODE_FAST_INDEX=0|1; default on.
bool DecodeFastIndex();
void SetDecodeFastIndexForTesting(int mode);
void SetDecodeStampsBuffer(void* device_buffer, int64_t ctas);

// Pipeline depth for a head dim and KV element size, and the decode CTAs one SM holds.
int DecodeStages(int head_dim, int kv_bytes);
int DecodeCtasPerSm(int head_dim, int kv_bytes);
// Dynamic shared memory of a decode variant.
int DecodeSmemBytes(const DecodeSpec& spec);

DecodeSpec ChooseDecode(DType q_dtype, DType kv_dtype, int head_dim, bool soft_cap, bool alibi,
                        bool rope);

}  // namespace flashjit::ops
