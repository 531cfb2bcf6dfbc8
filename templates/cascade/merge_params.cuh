// Params of the attention-state merge kernel: plain data shared by host and device.
#pragma once

#include "common/config.cuh"
#include "common/fast_div.cuh"

namespace flashjit::cascade {

// `count` attention states of one source: state i of (seq, head) has its output row at
// v + seq * v_seq + head * v_head + i * v_state (elements) and its log-sum-exp at
// s + seq * s_seq + head * s_head + i * s_state.
struct MergeSource {
  const void* v;
  const float* s;
  int64_t v_seq, v_head, v_state;
  int64_t s_seq, s_head, s_state;
  int32_t count;
  int32_t pad_;
};
FLASHJIT_CHECK_PARAMS(MergeSource, 72);

// Merges every state of src[0] and src[1] for each (seq, head) row: merge_state is one state
// from each source, merge_states one source of n states, the in-place form writes over
// src[0]'s only state. Rows whose mask byte is 0 are left untouched (mask may be null).
struct MergeParams {
  MergeSource src[2];
  void* v_out;          // [seq, heads, head_dim], strides out_v_seq / out_v_head
  float* s_out;         // [seq, heads], may be null
  const uint8_t* mask;  // [seq], may be null
  int64_t out_v_seq, out_v_head, out_s_seq, out_s_head;
  int64_t rows;       // seq * heads, < 2^31
  FastDivisor heads;  // row -> (seq, head) without a division
  int32_t head_dim;
  int32_t pad_;
};
FLASHJIT_CHECK_PARAMS(MergeParams, 232);

}  // namespace flashjit::cascade
