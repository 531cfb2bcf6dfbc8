// Paged KV-cache ops (FlashInfer's append_paged_kv_cache and get_batch_indices_positions). All
// run on the caller's stream; a bad argument returns InvalidArgument and launches nothing.
//
// Page table (FlashInfer's convention): request b owns pages kv_indices[kv_indptr[b] ..
// kv_indptr[b+1]); its token at position p lives in page kv_indices[kv_indptr[b] + p /
// page_size], slot p % page_size. kv_last_page_len [batch] is checked for shape only (the
// positions already say where each token goes).
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

namespace flashjit {

enum class KvLayout {
  kNHD,  // one cache [num_pages, page_size, num_heads, head_dim]
  kHND,  // one cache [num_pages, num_heads, page_size, head_dim]
};

// Writes append_key[t] and append_value[t] ([nnz, num_heads, head_dim]) at request
// batch_indices[t], position positions[t]. 16-bit caches have the dtype of the new rows; an fp8
// cache (e4m3 or e5m2) stores value / scale, saturated to the largest finite fp8 value.
// REQUIRES: append_key and append_value same shape, f16 or bf16, head_dim contiguous;
// batch_indices and positions int32 [nnz]; k_cache and v_cache 4-D in `layout`, same shape and
// dtype, head_dim contiguous, heads and head_dim equal to the new rows'; kv_indices int32 1-D,
// kv_indptr int32 [batch + 1], kv_last_page_len int32 [batch]; every (batch, position) names a
// page inside the table; k_scale, v_scale finite and > 0 (must be 1 for 16-bit caches).
FLASHJIT_API Status AppendPagedKvCache(Engine& engine, const TensorView& append_key,
                                       const TensorView& append_value,
                                       const TensorView& batch_indices, const TensorView& positions,
                                       const TensorView& k_cache, const TensorView& v_cache,
                                       const TensorView& kv_indices, const TensorView& kv_indptr,
                                       const TensorView& kv_last_page_len,
                                       KvLayout layout = KvLayout::kNHD, float k_scale = 1.f,
                                       float v_scale = 1.f, void* stream = nullptr);

// The same with one combined cache: [num_pages, 2, page_size, num_heads, head_dim] (NHD) or
// [num_pages, 2, num_heads, page_size, head_dim] (HND); index 0 of dim 1 is K, 1 is V.
FLASHJIT_API Status AppendPagedKvCache(Engine& engine, const TensorView& append_key,
                                       const TensorView& append_value,
                                       const TensorView& batch_indices, const TensorView& positions,
                                       const TensorView& paged_kv_cache,
                                       const TensorView& kv_indices, const TensorView& kv_indptr,
                                       const TensorView& kv_last_page_len,
                                       KvLayout layout = KvLayout::kNHD, float k_scale = 1.f,
                                       float v_scale = 1.f, void* stream = nullptr);

// For every request b and j in [append_indptr[b], append_indptr[b+1]):
//   batch_indices[j] = b,  positions[j] = seq_lens[b] - append_len(b) + (j - append_indptr[b]).
// REQUIRES: append_indptr int32 [batch + 1] non-decreasing from 0; seq_lens int32 [batch] with
// seq_lens[b] >= append_len(b); batch_indices and positions int32 [nnz], nnz =
// append_indptr[batch]. Elements of the outputs that no request covers are not written.
FLASHJIT_API Status GetBatchIndicesPositions(Engine& engine, const TensorView& append_indptr,
                                             const TensorView& seq_lens,
                                             const TensorView& batch_indices,
                                             const TensorView& positions, void* stream = nullptr);

}  // namespace flashjit
