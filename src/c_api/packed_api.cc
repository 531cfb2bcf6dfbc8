// C ABI: packed calls (flashjit_call_packed). One argument block per op call, for FFI callers
// whose cost is per converted argument (Python's ctypes). The block is checked (op, tensor
// count, ndim, scalar ranges), its tensors become DLTensors on the stack, and the plain C
// function of the op runs with them: one validation path, one set of messages.
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include "src/c_api/c_api_internal.h"

using namespace flashjit;
using namespace flashjit::capi;

// The layout is part of the ABI (the Python package writes it with struct.pack_into).
static_assert(sizeof(flashjit_packed_tensor) == 120, "packed tensor layout");
static_assert(offsetof(flashjit_packed_tensor, ndim) == 16, "packed tensor layout");
static_assert(offsetof(flashjit_packed_tensor, dtype) == 20, "packed tensor layout");
static_assert(offsetof(flashjit_packed_tensor, shape) == 24, "packed tensor layout");
static_assert(offsetof(flashjit_packed_tensor, strides) == 72, "packed tensor layout");
static_assert(offsetof(flashjit_packed_call, handle) == 8, "packed call layout");
static_assert(offsetof(flashjit_packed_call, stream) == 16, "packed call layout");
static_assert(offsetof(flashjit_packed_call, f) == 24, "packed call layout");
static_assert(offsetof(flashjit_packed_call, i) == 88, "packed call layout");
static_assert(offsetof(flashjit_packed_call, tensors) == 152, "packed call layout");

namespace {

using Tensors = const DLTensor* const*;
using Runner = flashjit_status (*)(const flashjit_packed_call&, Tensors);

struct PackedOp {
  int32_t op;
  const char* name;
  int num_tensors;
  const char* tensors;  // the tensor arguments' names, for messages
  Runner run;
};

flashjit_engine* Eng(const flashjit_packed_call& c) {
  return static_cast<flashjit_engine*>(c.handle);
}
float F(const flashjit_packed_call& c, int k) { return static_cast<float>(c.f[k]); }

const PackedOp* Find(int32_t op);

// i[k] as an int, or an error naming the op and the scalar.
bool ToInt(const flashjit_packed_call& c, int k, const char* what, int* out, flashjit_status* rc) {
  int64_t v = c.i[k];
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    const PackedOp* op = Find(c.op);
    *rc = SetError(
        FLASHJIT_INVALID_ARGUMENT, "flashjit_call_packed",
        fmt::format("{}: i[{}] ({}) = {} does not fit a C int", op ? op->name : "?", k, what, v));
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

#define FLASHJIT_PACKED_INT(var, k, what)                 \
  int var = 0;                                            \
  {                                                       \
    flashjit_status int_rc = FLASHJIT_OK;                 \
    if (!ToInt(c, k, what, &var, &int_rc)) return int_rc; \
  }

flashjit_sampling_args SamplingArgs(const flashjit_packed_call& c, Tensors t) {
  flashjit_sampling_args a;
  a.indices = t[2];
  a.valid = t[3];
  a.seed = static_cast<uint64_t>(c.i[0]);
  a.offset = static_cast<uint64_t>(c.i[1]);
  a.seed_device = reinterpret_cast<const void*>(static_cast<uintptr_t>(c.i[2]));
  a.offset_device = reinterpret_cast<const void*>(static_cast<uintptr_t>(c.i[3]));
  return a;
}

const flashjit_rope_options* RopeOptions(const flashjit_packed_call& c) {
  return reinterpret_cast<const flashjit_rope_options*>(static_cast<uintptr_t>(c.i[0]));
}

const PackedOp kOps[] = {
    // ---- norm: f0 eps
    {FLASHJIT_OP_RMSNORM, "rmsnorm", 3, "input, weight, out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_rmsnorm(Eng(c), t[0], t[1], t[2], F(c, 0), c.stream);
     }},
    {FLASHJIT_OP_GEMMA_RMSNORM, "gemma_rmsnorm", 3, "input, weight, out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_gemma_rmsnorm(Eng(c), t[0], t[1], t[2], F(c, 0), c.stream);
     }},
    {FLASHJIT_OP_FUSED_ADD_RMSNORM, "fused_add_rmsnorm", 3, "input, residual, weight",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_fused_add_rmsnorm(Eng(c), t[0], t[1], t[2], F(c, 0), c.stream);
     }},
    {FLASHJIT_OP_GEMMA_FUSED_ADD_RMSNORM, "gemma_fused_add_rmsnorm", 3, "input, residual, weight",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_gemma_fused_add_rmsnorm(Eng(c), t[0], t[1], t[2], F(c, 0), c.stream);
     }},
    {FLASHJIT_OP_LAYERNORM, "layernorm", 4, "input, gamma, beta, out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_layernorm(Eng(c), t[0], t[1], t[2], t[3], F(c, 0), c.stream);
     }},
    // ---- rope: i0 = const flashjit_rope_options* (0: the defaults)
    {FLASHJIT_OP_APPLY_ROPE, "apply_rope", 6, "q, k, q_rope, k_rope, indptr, offsets",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_rope(Eng(c), t[0], t[1], t[2], t[3], t[4], t[5], RopeOptions(c),
                                  c.stream);
     }},
    {FLASHJIT_OP_APPLY_ROPE_INPLACE, "apply_rope_inplace", 4, "q, k, indptr, offsets",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_rope_inplace(Eng(c), t[0], t[1], t[2], t[3], RopeOptions(c), c.stream);
     }},
    {FLASHJIT_OP_APPLY_ROPE_POS_IDS, "apply_rope_pos_ids", 5, "q, k, q_rope, k_rope, pos_ids",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_rope_pos_ids(Eng(c), t[0], t[1], t[2], t[3], t[4], RopeOptions(c),
                                          c.stream);
     }},
    {FLASHJIT_OP_APPLY_ROPE_POS_IDS_INPLACE, "apply_rope_pos_ids_inplace", 3, "q, k, pos_ids",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_rope_pos_ids_inplace(Eng(c), t[0], t[1], t[2], RopeOptions(c),
                                                  c.stream);
     }},
    {FLASHJIT_OP_APPLY_LLAMA31_ROPE, "apply_llama31_rope", 6,
     "q, k, q_rope, k_rope, indptr, offsets",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_llama31_rope(Eng(c), t[0], t[1], t[2], t[3], t[4], t[5],
                                          RopeOptions(c), c.stream);
     }},
    {FLASHJIT_OP_APPLY_LLAMA31_ROPE_INPLACE, "apply_llama31_rope_inplace", 4,
     "q, k, indptr, offsets",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_llama31_rope_inplace(Eng(c), t[0], t[1], t[2], t[3], RopeOptions(c),
                                                  c.stream);
     }},
    {FLASHJIT_OP_APPLY_LLAMA31_ROPE_POS_IDS, "apply_llama31_rope_pos_ids", 5,
     "q, k, q_rope, k_rope, pos_ids",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_llama31_rope_pos_ids(Eng(c), t[0], t[1], t[2], t[3], t[4],
                                                  RopeOptions(c), c.stream);
     }},
    {FLASHJIT_OP_APPLY_LLAMA31_ROPE_POS_IDS_INPLACE, "apply_llama31_rope_pos_ids_inplace", 3,
     "q, k, pos_ids",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_apply_llama31_rope_pos_ids_inplace(Eng(c), t[0], t[1], t[2], RopeOptions(c),
                                                          c.stream);
     }},
    // i0 head_size, i1 is_neox, i2 max_position_hint
    {FLASHJIT_OP_APPLY_ROPE_WITH_COS_SIN_CACHE, "apply_rope_with_cos_sin_cache", 6,
     "positions, query, key, query_out, key_out, cos_sin_cache",
     [](const flashjit_packed_call& c, Tensors t) {
       FLASHJIT_PACKED_INT(is_neox, 1, "is_neox");
       return flashjit_apply_rope_with_cos_sin_cache(Eng(c), t[0], t[1], t[2], t[3], t[4], c.i[0],
                                                     t[5], is_neox, c.i[2], c.stream);
     }},
    {FLASHJIT_OP_APPLY_ROPE_WITH_COS_SIN_CACHE_INPLACE, "apply_rope_with_cos_sin_cache_inplace", 4,
     "positions, query, key, cos_sin_cache",
     [](const flashjit_packed_call& c, Tensors t) {
       FLASHJIT_PACKED_INT(is_neox, 1, "is_neox");
       return flashjit_apply_rope_with_cos_sin_cache_inplace(Eng(c), t[0], t[1], t[2], c.i[0], t[3],
                                                             is_neox, c.i[2], c.stream);
     }},
    // ---- activation
    {FLASHJIT_OP_SILU_AND_MUL, "silu_and_mul", 2, "input, out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_silu_and_mul(Eng(c), t[0], t[1], c.stream);
     }},
    {FLASHJIT_OP_GELU_AND_MUL, "gelu_and_mul", 2, "input, out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_gelu_and_mul(Eng(c), t[0], t[1], c.stream);
     }},
    {FLASHJIT_OP_GELU_TANH_AND_MUL, "gelu_tanh_and_mul", 2, "input, out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_gelu_tanh_and_mul(Eng(c), t[0], t[1], c.stream);
     }},
    // ---- page: i0 layout, f0 k_scale, f1 v_scale
    {FLASHJIT_OP_APPEND_PAGED_KV_CACHE, "append_paged_kv_cache", 9,
     "append_key, append_value, batch_indices, positions, k_cache, v_cache, kv_indices, "
     "kv_indptr, kv_last_page_len",
     [](const flashjit_packed_call& c, Tensors t) {
       FLASHJIT_PACKED_INT(layout, 0, "layout");
       return flashjit_append_paged_kv_cache(Eng(c), t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
                                             t[8], static_cast<flashjit_kv_layout>(layout), F(c, 0),
                                             F(c, 1), c.stream);
     }},
    {FLASHJIT_OP_APPEND_PAGED_KV_CACHE_COMBINED, "append_paged_kv_cache_combined", 8,
     "append_key, append_value, batch_indices, positions, paged_kv_cache, kv_indices, "
     "kv_indptr, kv_last_page_len",
     [](const flashjit_packed_call& c, Tensors t) {
       FLASHJIT_PACKED_INT(layout, 0, "layout");
       return flashjit_append_paged_kv_cache_combined(
           Eng(c), t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
           static_cast<flashjit_kv_layout>(layout), F(c, 0), F(c, 1), c.stream);
     }},
    {FLASHJIT_OP_GET_BATCH_INDICES_POSITIONS, "get_batch_indices_positions", 4,
     "append_indptr, seq_lens, batch_indices, positions",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_get_batch_indices_positions(Eng(c), t[0], t[1], t[2], t[3], c.stream);
     }},
    // ---- sampling. Tensors 2, 3 = indices, valid (optional); i0 seed, i1 offset (bit
    // patterns), i2 seed_device, i3 offset_device (addresses, 0: none); i4 top_k; i5 order;
    // f0 top_p / min_p.
    {FLASHJIT_OP_SOFTMAX, "softmax", 3, "logits, out, temperature_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_softmax(Eng(c), t[0], t[1], F(c, 0), t[2], c.stream);
     }},
    {FLASHJIT_OP_SAMPLING_FROM_PROBS, "sampling_from_probs", 4, "probs, samples, indices, valid",
     [](const flashjit_packed_call& c, Tensors t) {
       flashjit_sampling_args a = SamplingArgs(c, t);
       return flashjit_sampling_from_probs(Eng(c), t[0], t[1], &a, c.stream);
     }},
    {FLASHJIT_OP_SAMPLING_FROM_LOGITS, "sampling_from_logits", 4, "logits, samples, indices, valid",
     [](const flashjit_packed_call& c, Tensors t) {
       flashjit_sampling_args a = SamplingArgs(c, t);
       return flashjit_sampling_from_logits(Eng(c), t[0], t[1], &a, c.stream);
     }},
    {FLASHJIT_OP_TOP_K_SAMPLING_FROM_PROBS, "top_k_sampling_from_probs", 5,
     "probs, samples, indices, valid, top_k_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       flashjit_sampling_args a = SamplingArgs(c, t);
       FLASHJIT_PACKED_INT(top_k, 4, "top_k");
       return flashjit_top_k_sampling_from_probs(Eng(c), t[0], t[1], top_k, t[4], &a, c.stream);
     }},
    {FLASHJIT_OP_TOP_P_SAMPLING_FROM_PROBS, "top_p_sampling_from_probs", 5,
     "probs, samples, indices, valid, top_p_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       flashjit_sampling_args a = SamplingArgs(c, t);
       return flashjit_top_p_sampling_from_probs(Eng(c), t[0], t[1], F(c, 0), t[4], &a, c.stream);
     }},
    {FLASHJIT_OP_MIN_P_SAMPLING_FROM_PROBS, "min_p_sampling_from_probs", 5,
     "probs, samples, indices, valid, min_p_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       flashjit_sampling_args a = SamplingArgs(c, t);
       return flashjit_min_p_sampling_from_probs(Eng(c), t[0], t[1], F(c, 0), t[4], &a, c.stream);
     }},
    {FLASHJIT_OP_TOP_K_TOP_P_SAMPLING_FROM_PROBS, "top_k_top_p_sampling_from_probs", 6,
     "probs, samples, indices, valid, top_k_arr, top_p_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       flashjit_sampling_args a = SamplingArgs(c, t);
       FLASHJIT_PACKED_INT(top_k, 4, "top_k");
       FLASHJIT_PACKED_INT(order, 5, "order");
       return flashjit_top_k_top_p_sampling_from_probs(
           Eng(c), t[0], t[1], top_k, t[4], F(c, 0), t[5],
           static_cast<flashjit_filter_apply_order>(order), &a, c.stream);
     }},
    {FLASHJIT_OP_TOP_K_TOP_P_SAMPLING_FROM_LOGITS, "top_k_top_p_sampling_from_logits", 6,
     "logits, samples, indices, valid, top_k_arr, top_p_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       flashjit_sampling_args a = SamplingArgs(c, t);
       FLASHJIT_PACKED_INT(top_k, 4, "top_k");
       FLASHJIT_PACKED_INT(order, 5, "order");
       return flashjit_top_k_top_p_sampling_from_logits(
           Eng(c), t[0], t[1], top_k, t[4], F(c, 0), t[5],
           static_cast<flashjit_filter_apply_order>(order), &a, c.stream);
     }},
    // i0 top_k / f0 top_p
    {FLASHJIT_OP_TOP_K_RENORM_PROBS, "top_k_renorm_probs", 3, "probs, out, top_k_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       FLASHJIT_PACKED_INT(top_k, 0, "top_k");
       return flashjit_top_k_renorm_probs(Eng(c), t[0], t[1], top_k, t[2], c.stream);
     }},
    {FLASHJIT_OP_TOP_P_RENORM_PROBS, "top_p_renorm_probs", 3, "probs, out, top_p_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_top_p_renorm_probs(Eng(c), t[0], t[1], F(c, 0), t[2], c.stream);
     }},
    {FLASHJIT_OP_TOP_K_MASK_LOGITS, "top_k_mask_logits", 3, "logits, out, top_k_arr",
     [](const flashjit_packed_call& c, Tensors t) {
       FLASHJIT_PACKED_INT(top_k, 0, "top_k");
       return flashjit_top_k_mask_logits(Eng(c), t[0], t[1], top_k, t[2], c.stream);
     }},
    // i0 seed, i1 offset
    {FLASHJIT_OP_CHAIN_SPECULATIVE_SAMPLING, "chain_speculative_sampling", 6,
     "draft_probs, draft_token_ids, target_probs, output_token_ids, accepted_token_num, "
     "emitted_draft_token_num",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_chain_speculative_sampling(Eng(c), t[0], t[1], t[2], t[3], t[4], t[5],
                                                  static_cast<uint64_t>(c.i[0]),
                                                  static_cast<uint64_t>(c.i[1]), c.stream);
     }},
    // ---- decode. single: i0 layout, i1 const flashjit_decode_options* (0: defaults),
    // i2 workspace address, i3 workspace bytes. batch run: handle = the batch-decode wrapper.
    {FLASHJIT_OP_SINGLE_DECODE, "single_decode", 5, "q, k, v, out, lse",
     [](const flashjit_packed_call& c, Tensors t) {
       FLASHJIT_PACKED_INT(layout, 0, "layout");
       if (c.i[3] < 0)
         return SetError(
             FLASHJIT_INVALID_ARGUMENT, "flashjit_call_packed",
             fmt::format("single_decode: i[3] (workspace_bytes) = {} is negative", c.i[3]));
       return flashjit_single_decode(
           Eng(c), t[0], t[1], t[2], t[3], t[4], static_cast<flashjit_kv_layout>(layout),
           reinterpret_cast<const flashjit_decode_options*>(static_cast<uintptr_t>(c.i[1])),
           reinterpret_cast<void*>(static_cast<uintptr_t>(c.i[2])), static_cast<size_t>(c.i[3]),
           c.stream);
     }},
    {FLASHJIT_OP_BATCH_DECODE_RUN, "batch_decode_run", 6,
     "q, k_cache, v_cache, kv_indices, out, lse",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_batch_decode_run(static_cast<flashjit_batch_decode*>(c.handle), t[0], t[1],
                                        t[2], t[3], t[4], t[5], c.stream);
     }},
    {FLASHJIT_OP_BATCH_DECODE_RUN_COMBINED, "batch_decode_run_combined", 5,
     "q, paged_kv_cache, kv_indices, out, lse",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_batch_decode_run_combined(static_cast<flashjit_batch_decode*>(c.handle),
                                                 t[0], t[1], t[2], t[3], t[4], c.stream);
     }},
    // ---- attention-state merges (absent s_out / mask: not written / every row)
    {FLASHJIT_OP_MERGE_STATE, "merge_state", 6, "v_a, s_a, v_b, s_b, v_out, s_out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_merge_state(Eng(c), t[0], t[1], t[2], t[3], t[4], t[5], c.stream);
     }},
    {FLASHJIT_OP_MERGE_STATE_IN_PLACE, "merge_state_in_place", 5, "v, s, v_other, s_other, mask",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_merge_state_in_place(Eng(c), t[0], t[1], t[2], t[3], t[4], c.stream);
     }},
    {FLASHJIT_OP_MERGE_STATES, "merge_states", 4, "v, s, v_out, s_out",
     [](const flashjit_packed_call& c, Tensors t) {
       return flashjit_merge_states(Eng(c), t[0], t[1], t[2], t[3], c.stream);
     }},
};

const PackedOp* Find(int32_t op) {
  for (const PackedOp& p : kOps)
    if (p.op == op) return &p;
  return nullptr;
}

// The name of tensor `index` in the op's comma-separated list.
std::string TensorName(const PackedOp& op, int index) {
  std::string_view names = op.tensors;
  for (int k = 0; k < index; ++k) {
    size_t comma = names.find(", ");
    if (comma == std::string_view::npos) return fmt::format("tensor {}", index);
    names.remove_prefix(comma + 2);
  }
  return std::string(names.substr(0, names.find(", ")));
}

}  // namespace

extern "C" {

flashjit_status flashjit_call_packed(const flashjit_packed_call* call) {
  const char* fn = "flashjit_call_packed";
  try {
    if (!call) return SetError(FLASHJIT_INVALID_ARGUMENT, fn, "call block is NULL");
    const PackedOp* op = Find(call->op);
    if (!op)
      return SetError(FLASHJIT_INVALID_ARGUMENT, fn,
                      fmt::format("op = {} is not a flashjit_packed_op", call->op));
    if (call->num_tensors != op->num_tensors)
      return SetError(FLASHJIT_INVALID_ARGUMENT, fn,
                      fmt::format("{}: num_tensors = {}, the op takes {} ({})", op->name,
                                  call->num_tensors, op->num_tensors, op->tensors));
    DLTensor dl[FLASHJIT_PACKED_MAX_TENSORS];
    const DLTensor* args[FLASHJIT_PACKED_MAX_TENSORS];
    for (int k = 0; k < op->num_tensors; ++k) {
      const flashjit_packed_tensor& t = call->tensors[k];
      if (t.ndim == FLASHJIT_PACKED_ABSENT) {
        args[k] = nullptr;
      } else if (t.ndim == FLASHJIT_PACKED_DLTENSOR) {
        args[k] = static_cast<const DLTensor*>(t.data);
      } else if (t.ndim < 0 || t.ndim > FLASHJIT_PACKED_MAX_DIMS) {
        return SetError(
            FLASHJIT_INVALID_ARGUMENT, fn,
            fmt::format("{}: tensor {} ({}): ndim = {}; allowed 0..{}, "
                        "FLASHJIT_PACKED_ABSENT (-1), FLASHJIT_PACKED_DLTENSOR (-2)",
                        op->name, k, TensorName(*op, k), t.ndim, FLASHJIT_PACKED_MAX_DIMS));
      } else {
        DLTensor& d = dl[k];
        d.data = t.data;
        d.device.device_type = static_cast<DLDeviceType>(t.device_type);
        d.device.device_id = t.device_id;
        d.ndim = t.ndim;
        d.dtype = t.dtype;
        d.shape = const_cast<int64_t*>(t.shape);  // read only
        d.strides = const_cast<int64_t*>(t.strides);
        d.byte_offset = 0;
        args[k] = &d;
      }
    }
    return op->run(*call, args);
  } catch (...) {
    return SetError(FLASHJIT_INTERNAL, fn, "unexpected C++ exception");
  }
}

const char* flashjit_packed_op_name(int32_t op) {
  const PackedOp* p = Find(op);
  return p ? p->name : nullptr;
}

int32_t flashjit_packed_op_num_tensors(int32_t op) {
  const PackedOp* p = Find(op);
  return p ? p->num_tensors : -1;
}

}  // extern "C"
