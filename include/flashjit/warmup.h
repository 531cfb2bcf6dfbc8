// Prewarming for a model: run the ops of one decode step of a transformer layer in dry run, so
// that every kernel variant the model would launch is compiled into the cache. Needs no GPU.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flashjit {

// The shapes of a decoder-only transformer that decide which kernels it needs.
struct FLASHJIT_API ModelShape {
  std::string name;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // 0: hidden_size / num_attention_heads
  int64_t vocab_size = 0;
  DType dtype = DType::kBF16;     // activations, weights, q/out
  DType kv_dtype = DType::kBF16;  // KV cache: dtype or fp8 (e4m3, e5m2)
  bool llama31_rope = false;      // rope_scaling.rope_type == "llama3"
  int32_t page_size = 16;
  std::vector<int32_t> batch_sizes = {1, 16, 64, 256};               // decode batches to plan for
  std::vector<int64_t> token_counts = {1, 16, 64, 256, 2048, 8192};  // prefill/step tokens
};

// Reads a Hugging Face config.json (hidden_size, intermediate_size, num_attention_heads,
// num_key_value_heads, head_dim, vocab_size, torch_dtype, rope_scaling), or a flashjit
// manifest whose "model" object holds those keys plus optional "kv_dtype", "page_size",
// "batch_sizes" and "token_counts". Errors name the missing or bad key.
FLASHJIT_API Result<ModelShape> ModelShapeFromJson(std::string_view json_text);

// Calls each op of a decode step (norms, RoPE, activation, KV append, batch decode, sampling)
// for every batch size and token count, with fake device pointers. REQUIRES: `engine` was
// created with dry_run (and an arch): nothing is loaded, launched or dereferenced.
// Returns the first error, naming the op and shape.
FLASHJIT_API Status WarmupModel(Engine& engine, const ModelShape& model);

}  // namespace flashjit
