// The public RoPE entry points: thin mappings onto RunRope.
#include <flashjit/rope.h>
#include <fmt/format.h>

#include "src/ops/rope/rope_spec.h"

namespace flashjit {

using ops::RopeArgs;
using ops::RopeMode;

namespace {

RopeArgs Plain(const TensorView& q, const TensorView& k, const TensorView& q_out,
               const TensorView& k_out, const RopeOptions& o) {
  RopeArgs a;
  a.q = q;
  a.k = k;
  a.q_out = q_out;
  a.k_out = k_out;
  a.rotary_dim = o.rotary_dim;
  a.interleave = o.interleave;
  a.rope_scale = o.rope_scale;
  a.rope_theta = o.rope_theta;
  return a;
}

RopeArgs Llama(const TensorView& q, const TensorView& k, const TensorView& q_out,
               const TensorView& k_out, const Llama31RopeOptions& o) {
  RopeArgs a = Plain(q, k, q_out, k_out, {o.rotary_dim, o.interleave, o.rope_scale, o.rope_theta});
  a.llama31 = true;
  a.low_freq_factor = o.low_freq_factor;
  a.high_freq_factor = o.high_freq_factor;
  a.old_context_len = o.old_context_len;
  return a;
}

Status WithIndptr(Engine& e, RopeArgs a, const TensorView& indptr, const TensorView& offsets,
                  void* stream) {
  a.mode = RopeMode::kIndptr;
  a.indptr = indptr;
  a.offsets = offsets;
  return ops::RunRope(e, a, stream);
}

Status WithPos(Engine& e, RopeArgs a, const TensorView& pos, void* stream) {
  a.mode = RopeMode::kPosIds;
  a.pos = pos;
  return ops::RunRope(e, a, stream);
}

// [nnz, heads * head_size] -> [nnz, heads, head_size]; 3-D views pass through.
Result<TensorView> AsHeads(const TensorView& t, std::string_view name, int64_t head_size) {
  if (t.ndim == 3) return t;
  if (t.ndim != 2)
    return Status::InvalidArgument(
        fmt::format("{}: expected [nnz, heads * head_size] or [nnz, heads, head_size], got {}",
                    name, t.Describe()));
  if (head_size <= 0 || t.shape[1] % head_size != 0)
    return Status::InvalidArgument(
        fmt::format("{}: width {} is not a multiple of head_size {}", name, t.shape[1], head_size));
  if (t.shape[1] > 1 && t.strides[1] != 1)
    return Status::InvalidArgument(
        fmt::format("{}: innermost dimension must have stride 1 ({})", name, t.Describe()));
  TensorView v = t;
  v.ndim = 3;
  v.shape[1] = t.shape[1] / head_size;
  v.shape[2] = head_size;
  v.strides[1] = head_size;
  v.strides[2] = 1;
  return v;
}

}  // namespace

Status ApplyRope(Engine& e, const TensorView& q, const TensorView& k, const TensorView& q_rope,
                 const TensorView& k_rope, const TensorView& indptr, const TensorView& offsets,
                 const RopeOptions& o, void* stream) {
  return WithIndptr(e, Plain(q, k, q_rope, k_rope, o), indptr, offsets, stream);
}

Status ApplyRopeInplace(Engine& e, const TensorView& q, const TensorView& k,
                        const TensorView& indptr, const TensorView& offsets, const RopeOptions& o,
                        void* stream) {
  return WithIndptr(e, Plain(q, k, q, k, o), indptr, offsets, stream);
}

Status ApplyRopePosIds(Engine& e, const TensorView& q, const TensorView& k,
                       const TensorView& q_rope, const TensorView& k_rope,
                       const TensorView& pos_ids, const RopeOptions& o, void* stream) {
  return WithPos(e, Plain(q, k, q_rope, k_rope, o), pos_ids, stream);
}

Status ApplyRopePosIdsInplace(Engine& e, const TensorView& q, const TensorView& k,
                              const TensorView& pos_ids, const RopeOptions& o, void* stream) {
  return WithPos(e, Plain(q, k, q, k, o), pos_ids, stream);
}

Status ApplyLlama31Rope(Engine& e, const TensorView& q, const TensorView& k,
                        const TensorView& q_rope, const TensorView& k_rope,
                        const TensorView& indptr, const TensorView& offsets,
                        const Llama31RopeOptions& o, void* stream) {
  return WithIndptr(e, Llama(q, k, q_rope, k_rope, o), indptr, offsets, stream);
}

Status ApplyLlama31RopeInplace(Engine& e, const TensorView& q, const TensorView& k,
                               const TensorView& indptr, const TensorView& offsets,
                               const Llama31RopeOptions& o, void* stream) {
  return WithIndptr(e, Llama(q, k, q, k, o), indptr, offsets, stream);
}

Status ApplyLlama31RopePosIds(Engine& e, const TensorView& q, const TensorView& k,
                              const TensorView& q_rope, const TensorView& k_rope,
                              const TensorView& pos_ids, const Llama31RopeOptions& o,
                              void* stream) {
  return WithPos(e, Llama(q, k, q_rope, k_rope, o), pos_ids, stream);
}

Status ApplyLlama31RopePosIdsInplace(Engine& e, const TensorView& q, const TensorView& k,
                                     const TensorView& pos_ids, const Llama31RopeOptions& o,
                                     void* stream) {
  return WithPos(e, Llama(q, k, q, k, o), pos_ids, stream);
}

Status ApplyRopeWithCosSinCache(Engine& e, const TensorView& positions, const TensorView& query,
                                const TensorView& key, const TensorView& query_out,
                                const TensorView& key_out, int64_t head_size,
                                const TensorView& cos_sin_cache, bool is_neox, void* stream,
                                int64_t max_position_hint) {
  FLASHJIT_ASSIGN_OR_RETURN(TensorView q, AsHeads(query, "query", head_size));
  FLASHJIT_ASSIGN_OR_RETURN(TensorView k, AsHeads(key, "key", head_size));
  FLASHJIT_ASSIGN_OR_RETURN(TensorView qo, AsHeads(query_out, "query_out", head_size));
  FLASHJIT_ASSIGN_OR_RETURN(TensorView ko, AsHeads(key_out, "key_out", head_size));
  if (q.shape[2] != head_size)
    return Status::InvalidArgument(
        fmt::format("query: head dim {} differs from head_size {}", q.shape[2], head_size));
  RopeArgs a;
  a.mode = RopeMode::kCache;
  a.q = q;
  a.k = k;
  a.q_out = qo;
  a.k_out = ko;
  a.pos = positions;
  a.cache = cos_sin_cache;
  a.rotary_dim = cos_sin_cache.ndim == 2 ? cos_sin_cache.shape[1] : -1;
  a.interleave = !is_neox;
  a.max_position = max_position_hint;
  return ops::RunRope(e, a, stream);
}

Status ApplyRopeWithCosSinCacheInplace(Engine& e, const TensorView& positions,
                                       const TensorView& query, const TensorView& key,
                                       int64_t head_size, const TensorView& cos_sin_cache,
                                       bool is_neox, void* stream, int64_t max_position_hint) {
  return ApplyRopeWithCosSinCache(e, positions, query, key, query, key, head_size, cos_sin_cache,
                                  is_neox, stream, max_position_hint);
}

}  // namespace flashjit
