// C ABI: paged KV-cache writes (flashjit/page.h).
#include <flashjit/page.h>
#include <fmt/format.h>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

namespace {

Result<KvLayout> ToLayout(flashjit_kv_layout layout) {
  switch (layout) {
    case FLASHJIT_KV_LAYOUT_NHD:
      return KvLayout::kNHD;
    case FLASHJIT_KV_LAYOUT_HND:
      return KvLayout::kHND;
  }
  return Status::InvalidArgument(
      fmt::format("layout = {}: allowed FLASHJIT_KV_LAYOUT_NHD (0), FLASHJIT_KV_LAYOUT_HND (1)",
                  static_cast<int>(layout)));
}

// The page-table arguments every append shares.
struct AppendArgs {
  TensorView key, value, batch_indices, positions, kv_indices, kv_indptr, kv_last_page_len;
};

Status ReadAppend(const DLTensor* append_key, const DLTensor* append_value,
                  const DLTensor* batch_indices, const DLTensor* positions,
                  const DLTensor* kv_indices, const DLTensor* kv_indptr,
                  const DLTensor* kv_last_page_len, AppendArgs* a) {
  FLASHJIT_RETURN_IF_ERROR(FromDL(append_key, "append_key", &a->key));
  FLASHJIT_RETURN_IF_ERROR(FromDL(append_value, "append_value", &a->value));
  FLASHJIT_RETURN_IF_ERROR(FromDL(batch_indices, "batch_indices", &a->batch_indices));
  FLASHJIT_RETURN_IF_ERROR(FromDL(positions, "positions", &a->positions));
  FLASHJIT_RETURN_IF_ERROR(FromDL(kv_indices, "kv_indices", &a->kv_indices));
  FLASHJIT_RETURN_IF_ERROR(FromDL(kv_indptr, "kv_indptr", &a->kv_indptr));
  return FromDL(kv_last_page_len, "kv_last_page_len", &a->kv_last_page_len);
}

}  // namespace

extern "C" {

flashjit_status flashjit_append_paged_kv_cache(
    flashjit_engine* h, const DLTensor* append_key, const DLTensor* append_value,
    const DLTensor* batch_indices, const DLTensor* positions, const DLTensor* k_cache,
    const DLTensor* v_cache, const DLTensor* kv_indices, const DLTensor* kv_indptr,
    const DLTensor* kv_last_page_len, flashjit_kv_layout layout, float k_scale, float v_scale,
    void* stream) {
  return WithEngine("flashjit_append_paged_kv_cache", h, [&](Engine& e) -> Status {
    AppendArgs a;
    TensorView kc, vc;
    FLASHJIT_RETURN_IF_ERROR(ReadAppend(append_key, append_value, batch_indices, positions,
                                        kv_indices, kv_indptr, kv_last_page_len, &a));
    FLASHJIT_RETURN_IF_ERROR(FromDL(k_cache, "k_cache", &kc));
    FLASHJIT_RETURN_IF_ERROR(FromDL(v_cache, "v_cache", &vc));
    FLASHJIT_ASSIGN_OR_RETURN(KvLayout l, ToLayout(layout));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, a.key.device));
    return AppendPagedKvCache(e, a.key, a.value, a.batch_indices, a.positions, kc, vc, a.kv_indices,
                              a.kv_indptr, a.kv_last_page_len, l, k_scale, v_scale, stream);
  });
}

flashjit_status flashjit_append_paged_kv_cache_combined(
    flashjit_engine* h, const DLTensor* append_key, const DLTensor* append_value,
    const DLTensor* batch_indices, const DLTensor* positions, const DLTensor* paged_kv_cache,
    const DLTensor* kv_indices, const DLTensor* kv_indptr, const DLTensor* kv_last_page_len,
    flashjit_kv_layout layout, float k_scale, float v_scale, void* stream) {
  return WithEngine("flashjit_append_paged_kv_cache_combined", h, [&](Engine& e) -> Status {
    AppendArgs a;
    TensorView cache;
    FLASHJIT_RETURN_IF_ERROR(ReadAppend(append_key, append_value, batch_indices, positions,
                                        kv_indices, kv_indptr, kv_last_page_len, &a));
    FLASHJIT_RETURN_IF_ERROR(FromDL(paged_kv_cache, "paged_kv_cache", &cache));
    FLASHJIT_ASSIGN_OR_RETURN(KvLayout l, ToLayout(layout));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, a.key.device));
    return AppendPagedKvCache(e, a.key, a.value, a.batch_indices, a.positions, cache, a.kv_indices,
                              a.kv_indptr, a.kv_last_page_len, l, k_scale, v_scale, stream);
  });
}

flashjit_status flashjit_get_batch_indices_positions(flashjit_engine* h,
                                                     const DLTensor* append_indptr,
                                                     const DLTensor* seq_lens,
                                                     const DLTensor* batch_indices,
                                                     const DLTensor* positions, void* stream) {
  return WithEngine("flashjit_get_batch_indices_positions", h, [&](Engine& e) -> Status {
    TensorView ip, lens, bi, pos;
    FLASHJIT_RETURN_IF_ERROR(FromDL(append_indptr, "append_indptr", &ip));
    FLASHJIT_RETURN_IF_ERROR(FromDL(seq_lens, "seq_lens", &lens));
    FLASHJIT_RETURN_IF_ERROR(FromDL(batch_indices, "batch_indices", &bi));
    FLASHJIT_RETURN_IF_ERROR(FromDL(positions, "positions", &pos));
    FLASHJIT_RETURN_IF_ERROR(CheckStream(e, stream, ip.device));
    return GetBatchIndicesPositions(e, ip, lens, bi, pos, stream);
  });
}

}  // extern "C"
