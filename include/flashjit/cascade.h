// Attention-state merges for cascade / split-KV attention (FlashInfer's merge_state,
// merge_state_in_place and merge_states). All run on the caller's stream; a bad argument
// returns InvalidArgument and launches nothing.
//
// An attention state of a (seq, head) row is its output row v [head_dim] (f16, bf16 or f32) and
// s, the base-2 log-sum-exp of the logits behind it (f32), as the decode ops return it. States
// over disjoint key sets merge into the state over their union:
//
//   s = log2(sum_i 2^s_i),   v = sum_i 2^(s_i - s) v_i        (fp32 math)
//
// A state with s_i = -inf (no keys) adds nothing; a row whose states are all -inf gets v = 0 and
// s = -inf. A NaN or +inf among a row's s_i makes that row's v and s NaN.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

namespace flashjit {

// Two states per row: (v_a, s_a) and (v_b, s_b) -> (v_out, s_out).
// REQUIRES: v_a, v_b, v_out [seq, heads, head_dim], one dtype (f16, bf16 or f32), head_dim >= 1,
// innermost dimension contiguous; s_a, s_b [seq, heads] f32; s_out [seq, heads] f32 or absent
// (data == nullptr: not written); all on one device. v_out may be v_a or v_b itself (same data
// and strides) and s_out s_a or s_b itself; otherwise outputs overlap no input and no output
// overlaps itself.
FLASHJIT_API Status MergeState(Engine& engine, const TensorView& v_a, const TensorView& s_a,
                               const TensorView& v_b, const TensorView& s_b,
                               const TensorView& v_out, const TensorView& s_out,
                               void* stream = nullptr);

// (v, s) <- merge((v, s), (v_other, s_other)) for every seq whose mask byte is non-zero (mask:
// optional bool/u8 [seq]; data == nullptr merges every row). Rows masked out are not touched.
// REQUIRES: as MergeState with v_a = v, s_a = s, v_b = v_other, s_b = s_other; v and s do not
// overlap v_other, s_other or mask.
FLASHJIT_API Status MergeStateInPlace(Engine& engine, const TensorView& v, const TensorView& s,
                                      const TensorView& v_other, const TensorView& s_other,
                                      const TensorView& mask, void* stream = nullptr);

// num_states states per row: v [seq, num_states, heads, head_dim], s [seq, num_states, heads]
// -> v_out [seq, heads, head_dim], s_out [seq, heads] (or absent). num_states may be 0 (every
// row gets v = 0, s = -inf). REQUIRES: dtypes, strides and device as MergeState; the outputs
// overlap no input.
FLASHJIT_API Status MergeStates(Engine& engine, const TensorView& v, const TensorView& s,
                                const TensorView& v_out, const TensorView& s_out,
                                void* stream = nullptr);

}  // namespace flashjit
