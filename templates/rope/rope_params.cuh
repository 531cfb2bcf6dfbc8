// Params of the rotary position embedding kernel: plain data shared by host and device.
#pragma once

#include "common/config.cuh"

namespace flashjit::rope {

// Strides (elements) of a [tokens, heads, head_dim] tensor whose last dimension is contiguous.
struct HeadLayout {
  int64_t stride_token;
  int64_t stride_head;
};

struct RopeParams {
  const void* q;               // [nnz, num_q_heads, head_dim]
  const void* k;               // [nnz, num_k_heads, head_dim]
  void* q_out;                 // same shape as q; may equal q (in place)
  void* k_out;                 // same shape as k; may equal k
  const void* pos;             // positions [nnz] (pos_ids and cache modes), int32 or int64
  const int32_t* indptr;       // indptr mode: [batch + 1] token ranges of the requests
  const int32_t* offsets;      // indptr mode: [batch] position of each request's first token
  const float* cos_sin_cache;  // cache mode: [max_pos, rotary_dim]: cos | sin halves
  HeadLayout q_layout, k_layout, q_out_layout, k_out_layout;
  int64_t cache_stride;  // row stride of the cache (elements)
  int64_t max_pos;       // rows of the cache; positions outside [0, max_pos) give NaN
  int32_t nnz;
  int32_t batch;
  int32_t num_q_heads;
  int32_t num_k_heads;
  int32_t head_dim;
  int32_t rotary_dim;   // even, <= head_dim; dims beyond it are copied unchanged
  int32_t tile_tokens;  // tile kernel: tokens per block tile (>= 1)
  int32_t angle_ld;     // tile kernel: floats per token row of the shared cos / sin tables
  int32_t row_chunks;   // row kernel: threads per head row (rotation + pass-through chunks)
  int32_t head_slots;   // row kernel: threads splitting a token's heads (each takes every n-th)
  // freq(i) = 2^(-2i / rotary_dim * log2_theta); smooth = clamp(freq * smooth_a + smooth_b, 0, 1);
  // freq = (1 - smooth) * freq * rcp_scale + smooth * freq   (plain RoPE: smooth_a = b = 0)
  double log2_theta;
  double rcp_scale;
  double smooth_a;
  double smooth_b;
};
FLASHJIT_CHECK_PARAMS(RopeParams, 216);

}  // namespace flashjit::rope
