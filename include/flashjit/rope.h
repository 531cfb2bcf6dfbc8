// Rotary position embedding (FlashInfer's apply_rope, apply_rope_pos_ids, apply_llama31_rope,
// apply_llama31_rope_pos_ids, apply_rope_with_cos_sin_cache and their _inplace forms). All run
// on the caller's stream; a bad argument returns InvalidArgument and launches nothing.
//
// q [nnz, num_q_heads, head_dim] and k [nnz, num_k_heads, head_dim], fp16 or bf16, last
// dimension contiguous (tokens and heads may be strided, e.g. slices of a fused qkv tensor).
// The first rotary_dim elements of each head are rotated: pair (i, i + rotary_dim / 2) by
// default (NeoX), pair (2i, 2i + 1) when interleave (GPT-J), both with frequency index i:
//   freq_i = 1 / (rope_scale * rope_theta^(2i / rotary_dim)),   angle = position * freq_i
//   out_a = a cos - b sin,   out_b = b cos + a sin.
// Elements past rotary_dim are copied unchanged (out of place) or left alone (in place).
// Out-of-place outputs have the shapes of their inputs; an in-place form writes q and k.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <cstdint>

namespace flashjit {

struct RopeOptions {
  int64_t rotary_dim = -1;  // -1: head_dim. REQUIRES: even, 0 < rotary_dim <= head_dim
  bool interleave = false;
  float rope_scale = 1.f;   // REQUIRES: finite, > 0
  float rope_theta = 1e4f;  // REQUIRES: finite, > 0
};

// Llama 3.1 frequency scaling: with wavelen = 2 pi / f and f = theta^(-2i / rotary_dim),
//   wavelen < old_context_len / high_freq_factor: f;  > old_context_len / low_freq_factor:
//   f / rope_scale;  between: (1 - s) f / rope_scale + s f, s = (old_context_len / wavelen -
//   low_freq_factor) / (high_freq_factor - low_freq_factor).
struct Llama31RopeOptions {
  int64_t rotary_dim = -1;
  bool interleave = false;
  float rope_scale = 8.f;
  float rope_theta = 5e5f;
  float low_freq_factor = 1.f;     // REQUIRES: > 0
  float high_freq_factor = 4.f;    // REQUIRES: > low_freq_factor
  int64_t old_context_len = 8192;  // REQUIRES: > 0
};

// Positions from a ragged batch: request b owns tokens [indptr[b], indptr[b+1]) and its first
// token sits at position offsets[b]. REQUIRES: indptr int32 [batch + 1], non-decreasing,
// indptr[0] = 0, indptr[batch] = nnz; offsets int32 [batch].
FLASHJIT_API Status ApplyRope(Engine& engine, const TensorView& q, const TensorView& k,
                              const TensorView& q_rope, const TensorView& k_rope,
                              const TensorView& indptr, const TensorView& offsets,
                              const RopeOptions& options = {}, void* stream = nullptr);
FLASHJIT_API Status ApplyRopeInplace(Engine& engine, const TensorView& q, const TensorView& k,
                                     const TensorView& indptr, const TensorView& offsets,
                                     const RopeOptions& options = {}, void* stream = nullptr);

// Explicit positions: pos_ids int32 or int64 [nnz].
FLASHJIT_API Status ApplyRopePosIds(Engine& engine, const TensorView& q, const TensorView& k,
                                    const TensorView& q_rope, const TensorView& k_rope,
                                    const TensorView& pos_ids, const RopeOptions& options = {},
                                    void* stream = nullptr);
FLASHJIT_API Status ApplyRopePosIdsInplace(Engine& engine, const TensorView& q, const TensorView& k,
                                           const TensorView& pos_ids,
                                           const RopeOptions& options = {}, void* stream = nullptr);

FLASHJIT_API Status ApplyLlama31Rope(Engine& engine, const TensorView& q, const TensorView& k,
                                     const TensorView& q_rope, const TensorView& k_rope,
                                     const TensorView& indptr, const TensorView& offsets,
                                     const Llama31RopeOptions& options = {},
                                     void* stream = nullptr);
FLASHJIT_API Status ApplyLlama31RopeInplace(Engine& engine, const TensorView& q,
                                            const TensorView& k, const TensorView& indptr,
                                            const TensorView& offsets,
                                            const Llama31RopeOptions& options = {},
                                            void* stream = nullptr);
FLASHJIT_API Status ApplyLlama31RopePosIds(Engine& engine, const TensorView& q, const TensorView& k,
                                           const TensorView& q_rope, const TensorView& k_rope,
                                           const TensorView& pos_ids,
                                           const Llama31RopeOptions& options = {},
                                           void* stream = nullptr);
FLASHJIT_API Status ApplyLlama31RopePosIdsInplace(Engine& engine, const TensorView& q,
                                                  const TensorView& k, const TensorView& pos_ids,
                                                  const Llama31RopeOptions& options = {},
                                                  void* stream = nullptr);

// vLLM-style cache: cos_sin_cache f32 [max_position, rotary_dim], row p = cos(p f_0..f_{r/2-1})
// then sin(...). query [nnz, num_q_heads * head_size] (or [nnz, num_q_heads, head_size]), key
// likewise; is_neox = !interleave. Positions int32 or int64 [nnz]. A position outside
// [0, max_position) cannot be checked before launch (it lives on the device): its rotated
// elements become NaN. Pass `max_position_hint` (the largest position, known on the host) to
// get InvalidArgument instead when it is beyond the cache.
FLASHJIT_API Status ApplyRopeWithCosSinCache(Engine& engine, const TensorView& positions,
                                             const TensorView& query, const TensorView& key,
                                             const TensorView& query_out, const TensorView& key_out,
                                             int64_t head_size, const TensorView& cos_sin_cache,
                                             bool is_neox = true, void* stream = nullptr,
                                             int64_t max_position_hint = -1);
FLASHJIT_API Status ApplyRopeWithCosSinCacheInplace(Engine& engine, const TensorView& positions,
                                                    const TensorView& query, const TensorView& key,
                                                    int64_t head_size,
                                                    const TensorView& cos_sin_cache,
                                                    bool is_neox = true, void* stream = nullptr,
                                                    int64_t max_position_hint = -1);

}  // namespace flashjit
