// C ABI: decode attention (flashjit/decode.h): single decode and the batch-decode wrapper
// handle (create / plan / run / destroy).
#include <flashjit/decode.h>
#include <fmt/format.h>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

namespace {

Result<KVLayout> ToLayout(flashjit_kv_layout layout) {
  switch (layout) {
    case FLASHJIT_KV_LAYOUT_NHD:
      return KVLayout::kNHD;
    case FLASHJIT_KV_LAYOUT_HND:
      return KVLayout::kHND;
  }
  return Status::InvalidArgument(
      fmt::format("layout = {}: allowed FLASHJIT_KV_LAYOUT_NHD (0), FLASHJIT_KV_LAYOUT_HND (1)",
                  static_cast<int>(layout)));
}

Status ToDecodeOptions(const flashjit_decode_options* o, DecodeOptions* d) {
  if (!o) return Status::Ok();
  d->sm_scale = o->sm_scale;
  d->logits_soft_cap = o->logits_soft_cap;
  d->window_left = o->window_left;
  d->alibi = o->alibi != 0;
  d->rope = o->rope != 0;
  d->rope_scale = o->rope_scale;
  d->rope_theta = o->rope_theta;
  d->k_scale = o->k_scale;
  d->v_scale = o->v_scale;
  return FromDLOptional(o->sinks, "options.sinks", &d->sinks);
}

// The wrapper behind a live handle; null when it is not live.
flashjit_batch_decode* LiveDecode(flashjit_batch_decode* h) {
  return IsLive(h, HandleKind::kBatchDecode) ? h : nullptr;
}

template <class F>
flashjit_status WithDecode(const char* fn, flashjit_batch_decode* h, F&& body) {
  if (!LiveDecode(h)) return SetError(FLASHJIT_INVALID_HANDLE, fn, HandleError(h, "batch_decode"));
  return Guard(fn, [&]() -> Status { return body(*h); });
}

}  // namespace

extern "C" {

void flashjit_decode_options_init(flashjit_decode_options* o) {
  if (!o) return;
  DecodeOptions d;
  *o = flashjit_decode_options{};
  o->sm_scale = d.sm_scale;
  o->logits_soft_cap = d.logits_soft_cap;
  o->window_left = d.window_left;
  o->alibi = d.alibi;
  o->rope = d.rope;
  o->rope_scale = d.rope_scale;
  o->rope_theta = d.rope_theta;
  o->k_scale = d.k_scale;
  o->v_scale = d.v_scale;
  o->sinks = nullptr;
}

size_t flashjit_single_decode_workspace_bytes(int64_t num_qo_heads, int64_t head_dim) {
  try {
    return SingleDecodeWorkspaceBytes(num_qo_heads, head_dim);
  } catch (...) {
    return 0;
  }
}

flashjit_status flashjit_single_decode(flashjit_engine* h, const DLTensor* q, const DLTensor* k,
                                       const DLTensor* v, const DLTensor* out, const DLTensor* lse,
                                       flashjit_kv_layout layout,
                                       const flashjit_decode_options* options, void* workspace,
                                       size_t workspace_bytes, void* stream) {
  return WithEngine("flashjit_single_decode", h, [&](Engine& e) -> Status {
    TensorView tq, tk, tv, to, tl;
    DecodeOptions o;
    FLASHJIT_RETURN_IF_ERROR(FromDL(q, "q", &tq));
    FLASHJIT_RETURN_IF_ERROR(FromDL(k, "k", &tk));
    FLASHJIT_RETURN_IF_ERROR(FromDL(v, "v", &tv));
    FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &to));
    FLASHJIT_RETURN_IF_ERROR(FromDLOptional(lse, "lse", &tl));
    FLASHJIT_RETURN_IF_ERROR(ToDecodeOptions(options, &o));
    FLASHJIT_ASSIGN_OR_RETURN(KVLayout l, ToLayout(layout));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, tq.device));
    return SingleDecode(e, tq, tk, tv, to, tl, l, o, workspace, workspace_bytes, stream);
  });
}

void flashjit_batch_decode_config_init(flashjit_batch_decode_config* c) {
  if (!c) return;
  BatchDecodeConfig d;
  *c = flashjit_batch_decode_config{};
  c->num_qo_heads = d.num_qo_heads;
  c->num_kv_heads = d.num_kv_heads;
  c->head_dim = d.head_dim;
  c->page_size = d.page_size;
  c->q_dtype = DLDataType{kDLBfloat, 16, 1};
  c->kv_dtype = DLDataType{kDLBfloat, 16, 1};
  c->layout = FLASHJIT_KV_LAYOUT_NHD;
  c->device = d.device;
  c->max_batch_size = d.max_batch_size;
  c->cuda_graph = d.cuda_graph;
}

flashjit_status flashjit_batch_decode_create(flashjit_engine* h,
                                             const flashjit_batch_decode_config* config,
                                             flashjit_batch_decode** wrapper) {
  std::shared_ptr<Engine> engine = LookupEngine(h);
  return WithEngine("flashjit_batch_decode_create", h, [&](Engine& e) -> Status {
    if (!wrapper) return Status::InvalidArgument("wrapper: output pointer is NULL");
    *wrapper = nullptr;
    if (!config) return Status::InvalidArgument("config is NULL");
    BatchDecodeConfig c;
    c.num_qo_heads = config->num_qo_heads;
    c.num_kv_heads = config->num_kv_heads;
    c.head_dim = config->head_dim;
    c.page_size = config->page_size;
    FLASHJIT_ASSIGN_OR_RETURN(c.q_dtype, FromDLType(config->q_dtype, "config.q_dtype"));
    FLASHJIT_ASSIGN_OR_RETURN(c.kv_dtype, FromDLType(config->kv_dtype, "config.kv_dtype"));
    FLASHJIT_ASSIGN_OR_RETURN(c.layout, ToLayout(config->layout));
    c.device = config->device;
    c.max_batch_size = config->max_batch_size;
    c.cuda_graph = config->cuda_graph != 0;
    FLASHJIT_ASSIGN_OR_RETURN(auto decode, BatchDecode::Create(e, c));
    auto* handle = new flashjit_batch_decode{engine, std::move(decode), c};
    RegisterHandle(handle, HandleKind::kBatchDecode);
    *wrapper = handle;
    return Status::Ok();
  });
}

flashjit_status flashjit_batch_decode_destroy(flashjit_batch_decode* h) {
  const char* fn = "flashjit_batch_decode_destroy";
  if (!h) return FLASHJIT_OK;
  try {
    if (!UnregisterHandle(h, HandleKind::kBatchDecode))
      return SetError(FLASHJIT_INVALID_HANDLE, fn, HandleError(h, "batch_decode"));
    h->decode.reset();  // tombstone, as for engines
    h->engine.reset();
    return FLASHJIT_OK;
  } catch (...) {
    return SetError(FLASHJIT_INTERNAL, fn, "unexpected C++ exception while destroying");
  }
}

flashjit_status flashjit_batch_decode_workspace_bytes(flashjit_batch_decode* h, size_t* bytes) {
  return WithDecode("flashjit_batch_decode_workspace_bytes", h,
                    [&](flashjit_batch_decode& w) -> Status {
                      if (!bytes) return Status::InvalidArgument("bytes: output pointer is NULL");
                      *bytes = w.decode->WorkspaceBytes();
                      return Status::Ok();
                    });
}

flashjit_status flashjit_batch_decode_plan(flashjit_batch_decode* h, const int32_t* kv_indptr,
                                           const int32_t* kv_last_page_len, int32_t batch_size,
                                           const flashjit_decode_options* options, void* workspace,
                                           size_t workspace_bytes, const int32_t* kv_indices,
                                           int64_t num_pages, void* stream) {
  return WithDecode("flashjit_batch_decode_plan", h, [&](flashjit_batch_decode& w) -> Status {
    DecodeOptions o;
    FLASHJIT_RETURN_IF_ERROR(ToDecodeOptions(options, &o));
    if (batch_size > 0 && (!kv_indptr || !kv_last_page_len))
      return Status::InvalidArgument("kv_indptr and kv_last_page_len (host arrays) must be set");
    FLASHJIT_RETURN_IF_ERROR(CheckStream(*w.engine, stream, w.config.device));
    return w.decode->Plan(kv_indptr, kv_last_page_len, batch_size, o, workspace, workspace_bytes,
                          stream, kv_indices, num_pages);
  });
}

flashjit_status flashjit_batch_decode_run(flashjit_batch_decode* h, const DLTensor* q,
                                          const DLTensor* k_cache, const DLTensor* v_cache,
                                          const DLTensor* kv_indices, const DLTensor* out,
                                          const DLTensor* lse, void* stream) {
  return WithDecode("flashjit_batch_decode_run", h, [&](flashjit_batch_decode& w) -> Status {
    TensorView tq, tk, tv, ti, to, tl;
    FLASHJIT_RETURN_IF_ERROR(FromDL(q, "q", &tq));
    FLASHJIT_RETURN_IF_ERROR(FromDL(k_cache, "k_cache", &tk));
    FLASHJIT_RETURN_IF_ERROR(FromDL(v_cache, "v_cache", &tv));
    FLASHJIT_RETURN_IF_ERROR(FromDL(kv_indices, "kv_indices", &ti));
    FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &to));
    FLASHJIT_RETURN_IF_ERROR(FromDLOptional(lse, "lse", &tl));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(*w.engine, stream, tq.device));
    return w.decode->Run(tq, tk, tv, ti, to, tl, stream);
  });
}

flashjit_status flashjit_batch_decode_run_combined(flashjit_batch_decode* h, const DLTensor* q,
                                                   const DLTensor* paged_kv_cache,
                                                   const DLTensor* kv_indices, const DLTensor* out,
                                                   const DLTensor* lse, void* stream) {
  return WithDecode("flashjit_batch_decode_run_combined", h,
                    [&](flashjit_batch_decode& w) -> Status {
                      TensorView tq, cache, tk, tv, ti, to, tl;
                      FLASHJIT_RETURN_IF_ERROR(FromDL(q, "q", &tq));
                      FLASHJIT_RETURN_IF_ERROR(FromDL(paged_kv_cache, "paged_kv_cache", &cache));
                      FLASHJIT_RETURN_IF_ERROR(FromDL(kv_indices, "kv_indices", &ti));
                      FLASHJIT_RETURN_IF_ERROR(FromDL(out, "out", &to));
                      FLASHJIT_RETURN_IF_ERROR(FromDLOptional(lse, "lse", &tl));
                      FLASHJIT_RETURN_IF_ERROR(SplitKVCache(cache, &tk, &tv));
                      FLASHJIT_RETURN_IF_ERROR(CheckStream(*w.engine, stream, tq.device));
                      return w.decode->Run(tq, tk, tv, ti, to, tl, stream);
                    });
}

}  // extern "C"
