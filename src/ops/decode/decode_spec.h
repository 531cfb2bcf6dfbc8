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
  uint8_t steal = 0;       // pair stealing (DecodeSteal; set by BatchDecode::Plan)
  uint8_t q_smem = 0;      // Q's fragments read from shared memory per step (DecodeQSmem)
  uint8_t page_size = 0;   // compiled-in page size, 0: read at run time (DecodeFixedPage)
  uint8_t reserved_ = 0;   // keeps the struct free of padding (FastKey hashes its bytes)

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
// (DecodeParams::grid_item_div: no run-time division, no branch on the launch form before its
// first loads) and reads the loader's kernel parameters before its work item (session 11). Knob
// FLASHJIT_DECODE_FAST_INDEX: 0 = never, 1 = every launch (ChooseDecode sets it); unset =
// kFastIndexAuto: batch decode plans of one CTA per unit with more CTAs than resident slots
// (BatchDecode::Plan), outside graph mode. Measured on the H200 (session 11 call 3, bf16 32/8
// heads, D 128, four interleaved runs, synced / queued / b2b us): such plans gained, B=256 L=1k
// -0.14 / -0.74 / -0.35, B=64 L=4k -1.46 / -0.33 / -0.24, fp8 B=64 L=4k -1.21 / -1.58 / -1.11,
// fp8 B=256 L=1k -1.79 / -1.58 / -1.18, the long multi-wave ones within noise; the one-wave
// plans gained 0.13-0.42 us queued but lost 0.08-0.38 us back to back (B=1 L=1k..32k, B=16
// L=1k/4k: with PDL, not understood), so they keep the run-time divisions.
enum DecodeFastIndexModes { kFastIndexNever = 0, kFastIndexAlways = 1, kFastIndexAuto = 2 };
int DecodeFastIndexMode();
// Tests: 1 / 0 force the form on / off for plans made from now on; < 0 restores the knob.
void SetDecodeFastIndexForTesting(int mode);
void SetDecodeStampsBuffer(void* device_buffer, int64_t ctas);
// Pair stealing (session 12, variant field `steal`): in a batch plan whose split requests are
// merged by their last CTA (not clusters, not persistent, not graph mode), each two neighbouring
// chunks of a request share the tiles around their boundary (region = 2 x min(chunk tiles) / 8,
// each side keeping more tiles of its own than the pipeline's depth), which the two CTAs claim
// kDecodeStealSpan tiles at a time from either end, so that the CTA that runs faster takes more
// of them (MarkDecodeStealPairs). Which CTA runs a region tile depends on timing, so the output's
// last bits may differ from run to run: off unless asked for. Knob FLASHJIT_DECODE_STEAL: unset /
// 0 = never (the default: bitwise reproducible), 1 = every plan that allows it, auto =
// kStealAuto: 16-bit KV, plans of one wave (work items x head tiles <= the resident slots), pairs
// whose chunks have at least kDecodeStealAutoTiles tiles. Measured on the H200 (bf16 32/8 heads,
// D 128, queued us, off -> on): B=16 L=32k (chunks of 256 tiles) 480.80 -> 477.61 in session 12's
// call 2, but 486.70 -> 486.32 and -0.41 in two later calls (about -0.4 us stable); B=16 L=16k
// (128 tiles) 245.72 -> 244.80, 250.49 -> 249.96; lost where chunks are short or KV is fp8: B=1
// L=16k (8 tiles) 27.37 -> 29.43, B=1 L=32k (16) 43.26 -> 44.16, fp8 B=16 L=4k (22) 56.15 ->
// 58.63, fp8 B=64 L=4k 195.75 -> 202.24, fp8 B=64 L=32k (171 tiles, four waves) 1291.3 -> 1333.6
// (fp8: the variant's longer loop, 746 -> 782 SASS instructions a tile).
// Whether the kernel of a 16-bit KV cache reads Q's tensor-core fragments from shared memory at
// each step instead of holding them in registers: at D 256, 64 registers a thread that the
// D 256 kernel (255 registers, spilling, one CTA of 4 warps per SM) lacked (session 13). Knob
// FLASHJIT_DECODE_Q_SMEM: 0 = never (registers, as before session 13); unset (or anything else) = D
// 256 only. fp8 caches read into registers keep Q's permuted fragments.
bool DecodeQSmem(int head_dim, DType kv_dtype);

// The page size a batch decode plan compiles into its kernel (variant field page_size, session
// 30: FixedPageTileLoader, no division or stepping between a thread's rows): the wrapper's page
// size where it is 16, 32 or 64 keys, else 0 (read at run time). Plan then starts every item on
// a page (a sliding window's first key rounded down to a page; the kernel masks by the window).
// Measured on the H200 (session 30 call 2, queued, A B B A against the run-time form): bf16 32/8
// heads D 128 page 16 -0.1 to -2.6 % on all 16 shapes, fp8 -2.0 to -3.7 % on 3 of 4 (+1.9 % at
// B=64 L=4k), the production configurations at page 16 and 64 -0.2 to -4.5 % but for 4 rows
// level or +0.5 to +0.9 %; page 1 +0.4 to +3.6 % at B >= 64 (so the variant allows 1 .. 64, the
// default takes 16 .. 64). Call 4: page 32 -0.1 to -4.5 % on all 16 bf16 shapes, Gemma-2 with
// its window -0.4 to -1.4 %, in-kernel RoPE -2 to -11 % at D 128 and up to -9 % at D 256.
// Knob FLASHJIT_DECODE_FIXED_PAGE=0: always 0.
int DecodeFixedPage(int page_size);
// Tests: 1 forces the form for every page size the variant allows (powers of two 1 .. 64), 0
// never, for plans made from now on; < 0 restores the knob.
void SetDecodeFixedPageForTesting(int mode);

enum DecodeStealModes { kStealNever = 0, kStealAlways = 1, kStealAuto = 2 };
constexpr int kDecodeStealAutoTiles = 64;
int DecodeStealMode();
// Tests: 1 / 0 force the form (always) / never for plans made from now on; < 0 restores the knob.
void SetDecodeStealForTesting(int mode);

// Pipeline depth for a head dim and KV element size (the CTAs an SM holds: DecodeCtasPerSm, in
// decode_common.h).
int DecodeStages(int head_dim, int kv_bytes);
// Dynamic shared memory of a decode variant.
int DecodeSmemBytes(const DecodeSpec& spec);

DecodeSpec ChooseDecode(DType q_dtype, DType kv_dtype, int head_dim, bool soft_cap, bool alibi,
                        bool rope);

}  // namespace flashjit::ops
