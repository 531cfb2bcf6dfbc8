// Params of the paged KV-cache kernels: plain data shared by host and device.
#pragma once

#include "common/config.cuh"

namespace flashjit::page {

// Element strides of one paged cache (K or V): page, slot within the page, head. The head
// dimension is contiguous. NHD [pages, page_size, heads, D] and HND [pages, heads, page_size, D]
// are both just strides.
struct CacheLayout {
  int64_t stride_page;
  int64_t stride_slot;
  int64_t stride_head;
};

struct AppendKvParams {
  const void* key;    // [nnz, heads, head_dim], strides key_stride_{token,head}
  const void* value;  // [nnz, heads, head_dim]
  void* k_cache;
  void* v_cache;
  const int32_t* batch_indices;  // [nnz]: request of each new token
  const int32_t* positions;      // [nnz]: position of each new token within its request
  const int32_t* kv_indices;     // pages of request b: kv_indices[kv_indptr[b] .. kv_indptr[b+1])
  const int32_t* kv_indptr;      // [batch + 1]
  int64_t key_stride_token, key_stride_head;
  int64_t value_stride_token, value_stride_head;
  CacheLayout k_layout, v_layout;
  int32_t nnz;
  int32_t num_heads;
  int32_t head_dim;
  int32_t page_size;
  float k_rcp_scale;  // the cache holds value / scale (fp8); 1 for 16-bit caches
  float v_rcp_scale;
  int32_t tile_tokens;  // token-tile form: most tokens one block's items span (smem rows)
  int32_t pad_;
};
FLASHJIT_CHECK_PARAMS(AppendKvParams, 176);

// batch_indices[j] = b and positions[j] = seq_lens[b] - (indptr[b+1] - indptr[b]) + (j -
// indptr[b]) for every j in [indptr[b], indptr[b+1]).
struct BatchPositionsParams {
  const int32_t* append_indptr;  // [batch + 1]
  const int32_t* seq_lens;       // [batch]: lengths after the append
  int32_t* batch_indices;        // [nnz]
  int32_t* positions;            // [nnz]
  int64_t batch;
};
FLASHJIT_CHECK_PARAMS(BatchPositionsParams, 40);

}  // namespace flashjit::page
