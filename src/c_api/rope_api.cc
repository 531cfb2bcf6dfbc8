// C ABI: rotary embedding (flashjit/rope.h).
#include <flashjit/rope.h>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

namespace {

RopeOptions ToRope(const flashjit_rope_options* o) {
  RopeOptions r;
  if (!o) return r;
  r.rotary_dim = o->rotary_dim;
  r.interleave = o->interleave != 0;
  r.rope_scale = o->rope_scale;
  r.rope_theta = o->rope_theta;
  return r;
}

Llama31RopeOptions ToLlama31(const flashjit_rope_options* o) {
  Llama31RopeOptions r;
  if (!o) return r;
  r.rotary_dim = o->rotary_dim;
  r.interleave = o->interleave != 0;
  r.rope_scale = o->rope_scale;
  r.rope_theta = o->rope_theta;
  r.low_freq_factor = o->low_freq_factor;
  r.high_freq_factor = o->high_freq_factor;
  r.old_context_len = o->old_context_len;
  return r;
}

// q, k, (when out of place) q_rope and k_rope, and the positions: pos_ids alone, or indptr
// and offsets.
struct RopeArgs {
  TensorView q, k, q_rope, k_rope, pos_ids, indptr, offsets;
};

struct RopePositions {
  bool ragged;
  const DLTensor* pos_ids;
  const DLTensor* indptr;
  const DLTensor* offsets;
};

RopePositions PosIds(const DLTensor* pos_ids) { return {false, pos_ids, nullptr, nullptr}; }
RopePositions Ragged(const DLTensor* indptr, const DLTensor* offsets) {
  return {true, nullptr, indptr, offsets};
}

// Reads every tensor (out of place when q_rope is given) and checks the stream against q's device.
Status ReadRope(const Engine& e, void* stream, const DLTensor* q, const DLTensor* k,
                const DLTensor* q_rope, const DLTensor* k_rope, bool inplace, RopePositions p,
                RopeArgs* out) {
  FLASHJIT_RETURN_IF_ERROR(FromDL(q, "q", &out->q));
  FLASHJIT_RETURN_IF_ERROR(FromDL(k, "k", &out->k));
  if (!inplace) {
    FLASHJIT_RETURN_IF_ERROR(FromDL(q_rope, "q_rope", &out->q_rope));
    FLASHJIT_RETURN_IF_ERROR(FromDL(k_rope, "k_rope", &out->k_rope));
  }
  if (!p.ragged) {
    FLASHJIT_RETURN_IF_ERROR(FromDL(p.pos_ids, "pos_ids", &out->pos_ids));
  } else {
    FLASHJIT_RETURN_IF_ERROR(FromDL(p.indptr, "indptr", &out->indptr));
    FLASHJIT_RETURN_IF_ERROR(FromDL(p.offsets, "offsets", &out->offsets));
  }
  return CheckStream(e, stream, out->q.device);
}

}  // namespace

extern "C" {

void flashjit_rope_options_init(flashjit_rope_options* o) {
  if (!o) return;
  RopeOptions r;
  Llama31RopeOptions l;
  *o = {r.rotary_dim,      r.interleave,       r.rope_scale,     r.rope_theta,
        l.low_freq_factor, l.high_freq_factor, l.old_context_len};
}

void flashjit_llama31_rope_options_init(flashjit_rope_options* o) {
  if (!o) return;
  Llama31RopeOptions l;
  *o = {l.rotary_dim,      l.interleave,       l.rope_scale,     l.rope_theta,
        l.low_freq_factor, l.high_freq_factor, l.old_context_len};
}

flashjit_status flashjit_apply_rope(flashjit_engine* h, const DLTensor* q, const DLTensor* k,
                                    const DLTensor* q_rope, const DLTensor* k_rope,
                                    const DLTensor* indptr, const DLTensor* offsets,
                                    const flashjit_rope_options* options, void* stream) {
  return WithEngine("flashjit_apply_rope", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(
        ReadRope(e, stream, q, k, q_rope, k_rope, false, Ragged(indptr, offsets), &t));
    return ApplyRope(e, t.q, t.k, t.q_rope, t.k_rope, t.indptr, t.offsets, ToRope(options), stream);
  });
}

flashjit_status flashjit_apply_rope_inplace(flashjit_engine* h, const DLTensor* q,
                                            const DLTensor* k, const DLTensor* indptr,
                                            const DLTensor* offsets,
                                            const flashjit_rope_options* options, void* stream) {
  return WithEngine("flashjit_apply_rope_inplace", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(
        ReadRope(e, stream, q, k, nullptr, nullptr, true, Ragged(indptr, offsets), &t));
    return ApplyRopeInplace(e, t.q, t.k, t.indptr, t.offsets, ToRope(options), stream);
  });
}

flashjit_status flashjit_apply_rope_pos_ids(flashjit_engine* h, const DLTensor* q,
                                            const DLTensor* k, const DLTensor* q_rope,
                                            const DLTensor* k_rope, const DLTensor* pos_ids,
                                            const flashjit_rope_options* options, void* stream) {
  return WithEngine("flashjit_apply_rope_pos_ids", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(ReadRope(e, stream, q, k, q_rope, k_rope, false, PosIds(pos_ids), &t));
    return ApplyRopePosIds(e, t.q, t.k, t.q_rope, t.k_rope, t.pos_ids, ToRope(options), stream);
  });
}

flashjit_status flashjit_apply_rope_pos_ids_inplace(flashjit_engine* h, const DLTensor* q,
                                                    const DLTensor* k, const DLTensor* pos_ids,
                                                    const flashjit_rope_options* options,
                                                    void* stream) {
  return WithEngine("flashjit_apply_rope_pos_ids_inplace", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(
        ReadRope(e, stream, q, k, nullptr, nullptr, true, PosIds(pos_ids), &t));
    return ApplyRopePosIdsInplace(e, t.q, t.k, t.pos_ids, ToRope(options), stream);
  });
}

flashjit_status flashjit_apply_llama31_rope(flashjit_engine* h, const DLTensor* q,
                                            const DLTensor* k, const DLTensor* q_rope,
                                            const DLTensor* k_rope, const DLTensor* indptr,
                                            const DLTensor* offsets,
                                            const flashjit_rope_options* options, void* stream) {
  return WithEngine("flashjit_apply_llama31_rope", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(
        ReadRope(e, stream, q, k, q_rope, k_rope, false, Ragged(indptr, offsets), &t));
    return ApplyLlama31Rope(e, t.q, t.k, t.q_rope, t.k_rope, t.indptr, t.offsets,
                            ToLlama31(options), stream);
  });
}

flashjit_status flashjit_apply_llama31_rope_inplace(flashjit_engine* h, const DLTensor* q,
                                                    const DLTensor* k, const DLTensor* indptr,
                                                    const DLTensor* offsets,
                                                    const flashjit_rope_options* options,
                                                    void* stream) {
  return WithEngine("flashjit_apply_llama31_rope_inplace", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(
        ReadRope(e, stream, q, k, nullptr, nullptr, true, Ragged(indptr, offsets), &t));
    return ApplyLlama31RopeInplace(e, t.q, t.k, t.indptr, t.offsets, ToLlama31(options), stream);
  });
}

flashjit_status flashjit_apply_llama31_rope_pos_ids(flashjit_engine* h, const DLTensor* q,
                                                    const DLTensor* k, const DLTensor* q_rope,
                                                    const DLTensor* k_rope, const DLTensor* pos_ids,
                                                    const flashjit_rope_options* options,
                                                    void* stream) {
  return WithEngine("flashjit_apply_llama31_rope_pos_ids", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(ReadRope(e, stream, q, k, q_rope, k_rope, false, PosIds(pos_ids), &t));
    return ApplyLlama31RopePosIds(e, t.q, t.k, t.q_rope, t.k_rope, t.pos_ids, ToLlama31(options),
                                  stream);
  });
}

flashjit_status flashjit_apply_llama31_rope_pos_ids_inplace(flashjit_engine* h, const DLTensor* q,
                                                            const DLTensor* k,
                                                            const DLTensor* pos_ids,
                                                            const flashjit_rope_options* options,
                                                            void* stream) {
  return WithEngine("flashjit_apply_llama31_rope_pos_ids_inplace", h, [&](Engine& e) -> Status {
    RopeArgs t;
    FLASHJIT_RETURN_IF_ERROR(
        ReadRope(e, stream, q, k, nullptr, nullptr, true, PosIds(pos_ids), &t));
    return ApplyLlama31RopePosIdsInplace(e, t.q, t.k, t.pos_ids, ToLlama31(options), stream);
  });
}

flashjit_status flashjit_apply_rope_with_cos_sin_cache(
    flashjit_engine* h, const DLTensor* positions, const DLTensor* query, const DLTensor* key,
    const DLTensor* query_out, const DLTensor* key_out, int64_t head_size,
    const DLTensor* cos_sin_cache, int is_neox, int64_t max_position_hint, void* stream) {
  return WithEngine("flashjit_apply_rope_with_cos_sin_cache", h, [&](Engine& e) -> Status {
    TensorView pos, q, k, qo, ko, cache;
    FLASHJIT_RETURN_IF_ERROR(FromDL(positions, "positions", &pos));
    FLASHJIT_RETURN_IF_ERROR(FromDL(query, "query", &q));
    FLASHJIT_RETURN_IF_ERROR(FromDL(key, "key", &k));
    FLASHJIT_RETURN_IF_ERROR(FromDL(query_out, "query_out", &qo));
    FLASHJIT_RETURN_IF_ERROR(FromDL(key_out, "key_out", &ko));
    FLASHJIT_RETURN_IF_ERROR(FromDL(cos_sin_cache, "cos_sin_cache", &cache));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, q.device));
    return ApplyRopeWithCosSinCache(e, pos, q, k, qo, ko, head_size, cache, is_neox != 0, stream,
                                    max_position_hint);
  });
}

flashjit_status flashjit_apply_rope_with_cos_sin_cache_inplace(
    flashjit_engine* h, const DLTensor* positions, const DLTensor* query, const DLTensor* key,
    int64_t head_size, const DLTensor* cos_sin_cache, int is_neox, int64_t max_position_hint,
    void* stream) {
  return WithEngine("flashjit_apply_rope_with_cos_sin_cache_inplace", h, [&](Engine& e) -> Status {
    TensorView pos, q, k, cache;
    FLASHJIT_RETURN_IF_ERROR(FromDL(positions, "positions", &pos));
    FLASHJIT_RETURN_IF_ERROR(FromDL(query, "query", &q));
    FLASHJIT_RETURN_IF_ERROR(FromDL(key, "key", &k));
    FLASHJIT_RETURN_IF_ERROR(FromDL(cos_sin_cache, "cos_sin_cache", &cache));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, q.device));
    return ApplyRopeWithCosSinCacheInplace(e, pos, q, k, head_size, cache, is_neox != 0, stream,
                                           max_position_hint);
  });
}

}  // extern "C"
