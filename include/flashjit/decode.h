// Decode attention: one new query token per request against its KV cache.
//
//   logits[h, j] = sm_scale * q[h] . k[j, h / group]   (soft cap, ALiBi, window: DecodeOptions)
//   out[h] = softmax_j(logits[h, :]) . v[:, h / group],   lse[h] = log2(sum_j exp(logits[h, j]))
//
// with group = num_qo_heads / num_kv_heads (any ratio), head_dim 64, 128 or 256, q/out fp16 or
// bf16, the KV cache in q's dtype or fp8 (e4m3, e5m2, dequantised by k_scale and v_scale).
// Numerics: fp32 accumulation on tensor cores; a request with no key gets out = 0 and
// lse = -inf; logits far below zero (even -5e5) give the right softmax; LSE is base 2.
//
// Everything runs on the caller's stream and returns before the kernels finish. Every argument
// is checked before anything launches; a bad one returns InvalidArgument and writes nothing.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/export.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace flashjit {

// Order of a KV tensor's dims: NHD = [.., tokens, kv heads, head_dim],
// HND = [.., kv heads, tokens, head_dim].
enum class KVLayout : uint8_t { kNHD = 0, kHND = 1 };

struct FLASHJIT_API DecodeOptions {
  float sm_scale = 0.f;         // 0: 1 / sqrt(head_dim)
  float logits_soft_cap = 0.f;  // > 0: logits = cap * tanh(logits / cap)
  int32_t window_left = -1;     // >= 0: only keys j >= kv_len - 1 - window_left are seen
  bool alibi = false;           // logits += slope(h) * (j - (kv_len - 1)), FlashInfer's slopes
  // RoPE (rotate halves) on q at kv_len - 1 and on k[j] at j, in-kernel: dim pair i turns by
  // pos / rope_scale * rope_theta^(-2i / head_dim) radians. The frequencies are formed in double
  // from 1 / rope_scale and log2(rope_theta) rounded to float, and the angles are reduced
  // exactly: an angle is off by those two roundings (at most about angle x 6e-7) and a few 1e-7
  // rad, at any position below 2^24. The rotated q and k are rounded to q's 16-bit type.
  bool rope = false;
  float rope_scale = 1.f;
  float rope_theta = 1e4f;
  float k_scale = 1.f;  // logits use k * k_scale, the output v * v_scale
  float v_scale = 1.f;
  // Attention sinks: f32 [num_qo_heads] on the device, natural-log logits that join each
  // softmax denominator (and the LSE) but have no value. data == nullptr: none.
  TensorView sinks;
};

// ---- single request ---------------------------------------------------------------------------

// Device workspace bytes with which SingleDecode can split a long KV over all SMs. Any size
// works (0: no split, one CTA per kv head); this size allows the largest split it chooses.
FLASHJIT_API size_t SingleDecodeWorkspaceBytes(int64_t num_qo_heads, int64_t head_dim);

// REQUIRES: q [num_qo_heads, head_dim]; k, v [kv_len, num_kv_heads, head_dim] (NHD) or
// [num_kv_heads, kv_len, head_dim] (HND), unit inner stride, other strides multiples of 8
// elements, 16-byte aligned (k and v strides also >= 0 and under 2^32 bytes);
// num_qo_heads % num_kv_heads == 0; out like q (contiguous rows);
// lse f32 [num_qo_heads] or absent (data == nullptr); workspace: device memory or null.
FLASHJIT_API Status SingleDecode(Engine& engine, const TensorView& q, const TensorView& k,
                                 const TensorView& v, const TensorView& out,
                                 const TensorView& lse = {}, KVLayout layout = KVLayout::kNHD,
                                 const DecodeOptions& options = {}, void* workspace = nullptr,
                                 size_t workspace_bytes = 0, void* stream = nullptr);

// ---- batch over a paged KV cache (plan / run) -------------------------------------------------

struct FLASHJIT_API BatchDecodeConfig {
  int32_t num_qo_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 128;
  int32_t page_size = 16;
  DType q_dtype = DType::kBF16;
  DType kv_dtype = DType::kBF16;
  KVLayout layout = KVLayout::kNHD;
  int device = 0;
  // Plans never exceed this batch; it sizes the workspace (WorkspaceBytes()).
  int32_t max_batch_size = 256;
  // CUDA graph mode: Run() launches fixed grids that read the plan from the workspace, so a
  // graph captured once stays valid across Plan() calls with new lengths, as long as every
  // Plan() uses the same workspace and Run() the same q/out/lse/kv_indices buffers.
  // The fixed grid is sized by max_batch_size, and every replay launches all of it: the
  // requests, plus one wave of split work items where max_batch_size requests fit the GPU's
  // resident decode CTAs unsplit (else four waves). CTAs beyond the current plan exit at once,
  // so a wrapper per captured batch size (max_batch_size = that size) keeps replays short.
  // On sm_90+ with a 16-bit cache at head dim 128, a wrapper whose max_batch_size x
  // num_kv_heads x ceil(group / 16) x 2 fits the resident CTAs, but x 8 does not, launches in
  // thread-block clusters of 2. Plans that split every request in two then merge inside the
  // cluster; other plans run in the same launch unchanged. On an H200 with 8 kv heads that is
  // 5-16 requests.
  bool cuda_graph = false;
};

// A reusable decode wrapper. Not thread-safe: one Plan/Run sequence at a time.
class FLASHJIT_API BatchDecode {
 public:
  static Result<std::unique_ptr<BatchDecode>> Create(Engine& engine,
                                                     const BatchDecodeConfig& config);
  ~BatchDecode();

  // Device workspace bytes every Plan() needs (for max_batch_size requests).
  size_t WorkspaceBytes() const;

  // Chooses the schedule for a batch and copies it into `workspace` on `stream`. Host arrays
  // (FlashInfer's convention): kv_indptr [batch + 1] page offsets into kv_indices,
  // kv_last_page_len [batch] in [1, page_size] (0 for a request with no page); optional
  // kv_indices [kv_indptr[batch]] with num_pages > 0: checked to lie in [0, num_pages).
  // Compiles (or fetches) the kernels the options need, so Run() never compiles.
  Status Plan(const int32_t* kv_indptr, const int32_t* kv_last_page_len, int32_t batch_size,
              const DecodeOptions& options, void* workspace, size_t workspace_bytes,
              void* stream = nullptr, const int32_t* kv_indices = nullptr, int64_t num_pages = 0);

  // Launches the planned batch: no allocation, no host sync, no compile. One kernel launch, or
  // two where the plan merges split requests with the merge kernel (a CTA per request, query head
  // and 32 columns, after the attention kernel). In graph mode the launches are fixed: the merge
  // kernel is launched on every replay (exiting at once when the plan does not use it) by
  // wrappers of groups (num_qo_heads / num_kv_heads) of at least 4 whose max_batch_size x
  // num_kv_heads x ceil(group / 16) x 8 is at most the GPU's resident decode CTAs (264 on an
  // H200 at head dim 128: small batches), never by others.
  // REQUIRES: q [batch, Hq, D]; k_cache and v_cache [num_pages, page_size, Hkv, D] (NHD) or
  // [num_pages, Hkv, page_size, D] (HND) with equal strides, each >= 0 and under 2^32 bytes
  // (SplitKVCache() gives them for a combined [num_pages, 2, ...] tensor); kv_indices i32 [>=
  // kv_indptr[batch]] on the device; out like q; lse f32 [batch, Hq] or absent. In graph mode the
  // batch dim may be larger than the plan's batch (fixed buffers).
  Status Run(const TensorView& q, const TensorView& k_cache, const TensorView& v_cache,
             const TensorView& kv_indices, const TensorView& out, const TensorView& lse = {},
             void* stream = nullptr);

  struct State;

 private:
  explicit BatchDecode(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Views of K and V inside one paged cache tensor [num_pages, 2, page_size, Hkv, D] (NHD) or
// [num_pages, 2, Hkv, page_size, D] (HND).
FLASHJIT_API Status SplitKVCache(const TensorView& cache, TensorView* k_cache, TensorView* v_cache);

}  // namespace flashjit
