/* flashjit C ABI: the one surface other languages (Python, Rust, C, ...) link against.
 *
 * C99, no C++ needed to include it. A thin shim over the C++ API (the include/flashjit/ headers):
 *   - opaque handles: flashjit_engine, flashjit_batch_decode;
 *   - every function returns a flashjit_status; on failure the calling thread's message is in
 *     flashjit_last_error() (successful calls leave it unchanged, like errno);
 *   - tensors are DLPack DLTensor (device kDLCUDA; strides NULL = row-major contiguous, in
 *     elements; byte_offset honoured); the caller keeps the memory alive while kernels run;
 *   - streams are CUstream values passed as void* (NULL: the legacy default stream). A stream
 *     must belong to the tensors' device; that is checked with the driver;
 *   - no C++ exception ever crosses this boundary (an unexpected one becomes
 *     FLASHJIT_INTERNAL);
 *   - a handle that is NULL, destroyed, or was never created by this library is an error
 *     (FLASHJIT_INVALID_HANDLE), not a crash.
 *
 * Thread safety: an engine may be used from any number of threads at once. A batch-decode
 * handle is not thread-safe (one plan/run sequence at a time).
 *
 * JSON outputs go into caller buffers with snprintf's convention: `buf` receives at most
 * `buf_size` bytes including the terminating NUL, and `*needed` (when non-NULL) the size the
 * whole text needs (strlen + 1). Passing buf = NULL, buf_size = 0 asks for the size only.
 * Queries without side effects (show-config, cache ls, bundle inspect, render, spec-ops)
 * return FLASHJIT_BUFFER_TOO_SMALL when a non-NULL buffer was too short (it then holds a
 * truncated, NUL-terminated prefix); calls that act (build, verify, gc, import, export) return
 * the action's status and truncate the report silently (compare *needed with buf_size).
 */
#ifndef FLASHJIT_FLASHJIT_H_
#define FLASHJIT_FLASHJIT_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#if defined(FLASHJIT_BUILDING_LIBRARY)
#define FLASHJIT_C_API __attribute__((visibility("default")))
#else
#define FLASHJIT_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header's ABI. Bumped when a struct or signature changes incompatibly. */
#define FLASHJIT_C_ABI_VERSION 1

/* DLPack >= 1.0 type codes that older headers (Debian's 0.6) lack. */
#define FLASHJIT_DL_BOOL 6           /* kDLBool */
#define FLASHJIT_DL_FLOAT8_E4M3FN 10 /* kDLFloat8_e4m3fn */
#define FLASHJIT_DL_FLOAT8_E5M2 12   /* kDLFloat8_e5m2 */

typedef enum flashjit_status {
  FLASHJIT_OK = 0,
  FLASHJIT_INVALID_ARGUMENT = 1, /* bad input: shape, dtype, device, strides, option */
  FLASHJIT_NOT_FOUND = 2,
  FLASHJIT_UNSUPPORTED = 3,
  FLASHJIT_COMPILE_ERROR = 4, /* the message holds NVRTC's log */
  FLASHJIT_CUDA_ERROR = 5,
  FLASHJIT_NO_DRIVER = 6,
  FLASHJIT_IO_ERROR = 7,
  FLASHJIT_CORRUPTION = 8,
  FLASHJIT_PERMISSION_DENIED = 9,
  FLASHJIT_INTERNAL = 10,         /* a bug in flashjit (or an unexpected C++ exception) */
  FLASHJIT_INVALID_HANDLE = 11,   /* NULL, destroyed or foreign handle */
  FLASHJIT_BUFFER_TOO_SMALL = 12, /* a query's output did not fit; see *needed */
} flashjit_status;

/* "OK", "InvalidArgument", ... Never NULL; static storage. */
FLASHJIT_C_API const char* flashjit_status_name(flashjit_status status);

/* The message of the last failed call on this thread ("" if none). Valid until the next
 * flashjit call on this thread. */
FLASHJIT_C_API const char* flashjit_last_error(void);

/* "0.1.0" (static storage) and FLASHJIT_C_ABI_VERSION of the library actually loaded. */
FLASHJIT_C_API const char* flashjit_version(void);
FLASHJIT_C_API int flashjit_abi_version(void);

/* ---- engine ------------------------------------------------------------------------------ */

typedef struct flashjit_engine flashjit_engine;

/* Mirrors flashjit::EngineOptions. Strings may be NULL (= empty). Call
 * flashjit_engine_options_init() first, then set what you need. */
typedef struct flashjit_engine_options {
  uint32_t struct_size;            /* set by init: sizeof(flashjit_engine_options) */
  const char* cache_dir;           /* NULL: $FLASHJIT_CACHE_DIR, XDG cache, ~/.cache/flashjit */
  int disable_cache;               /* in-memory kernels only */
  const char* bundles;             /* ':'-separated read-only bundle files */
  const char* arch;                /* e.g. "sm_90a"; NULL: $FLASHJIT_ARCH, else the GPU's */
  const char* cuda_include_dir;    /* for NVRTC; NULL: found at run time */
  int disable_jit;                 /* a cache miss is an error */
  int always_compile;              /* ignore cached binaries */
  const char* dump_dir;            /* write rendered sources and logs here */
  int dry_run;                     /* build kernels, never launch (needs arch) */
  int compile_wait_ms;             /* wait for a peer process compiling the same key */
  const char* trusted_bundle_keys; /* ':'-separated Ed25519 public key PEM files */
  int require_signed_bundles;
  int read_environment; /* let FLASHJIT_* fill options left at defaults (init: 1) */
} flashjit_engine_options;

FLASHJIT_C_API void flashjit_engine_options_init(flashjit_engine_options* options);

/* options NULL: the defaults (and the environment). On success *engine is a new handle. */
FLASHJIT_C_API flashjit_status flashjit_engine_create(const flashjit_engine_options* options,
                                                      flashjit_engine** engine);
/* Releases the handle; later calls with it return FLASHJIT_INVALID_HANDLE. Batch-decode handles
 * made from it keep working until they are destroyed. Destroying NULL is FLASHJIT_OK. */
FLASHJIT_C_API flashjit_status flashjit_engine_destroy(flashjit_engine* engine);

/* The resolved configuration (show-config) as a JSON object: versions, cache path, arch,
 * driver, GPUs, bundles, ops, stats. */
FLASHJIT_C_API flashjit_status flashjit_engine_show_config(flashjit_engine* engine, char* buf,
                                                           size_t buf_size, size_t* needed);

/* Every op and spec field this build knows (flashjit spec-ops --json). No engine needed. */
FLASHJIT_C_API flashjit_status flashjit_spec_ops(char* buf, size_t buf_size, size_t* needed);

/* The generated translation unit of one spec (flashjit render). */
FLASHJIT_C_API flashjit_status flashjit_engine_render(flashjit_engine* engine,
                                                      const char* spec_json, char* buf,
                                                      size_t buf_size, size_t* needed);

/* Finds or compiles one spec for `arch` (NULL: the engine's) and stores it in the cache
 * (flashjit compile). Needs no GPU. The KernelInfo goes to buf as JSON (may be NULL). */
FLASHJIT_C_API flashjit_status flashjit_engine_build(flashjit_engine* engine, const char* spec_json,
                                                     const char* arch, char* buf, size_t buf_size,
                                                     size_t* needed);

typedef struct flashjit_engine_stats {
  int64_t compiles, compile_failures, memory_hits, cache_hits, bundle_hits, module_loads,
      compile_waits, store_failures;
} flashjit_engine_stats;
FLASHJIT_C_API flashjit_status flashjit_engine_get_stats(flashjit_engine* engine,
                                                         flashjit_engine_stats* stats);

/* ---- cache and bundles (the CLI's cache/bundle commands) ------------------------------------ */

/* JSON array of cached kernels (no binaries). */
FLASHJIT_C_API flashjit_status flashjit_cache_ls(flashjit_engine* engine, char* buf,
                                                 size_t buf_size, size_t* needed);
/* Checks every row (repair != 0: removes bad ones). Counts through the pointers (each may be
 * NULL); the full report (problems) as JSON to buf. */
FLASHJIT_C_API flashjit_status flashjit_cache_verify(flashjit_engine* engine, int repair,
                                                     int64_t* rows, int64_t* bad_rows,
                                                     int64_t* removed, char* buf, size_t buf_size,
                                                     size_t* needed);
/* Evicts least-recently-used kernels until at most max_bytes of cubins remain. */
FLASHJIT_C_API flashjit_status flashjit_cache_gc(flashjit_engine* engine, int64_t max_bytes,
                                                 int64_t* evicted);
/* Removes the kernels this library can never serve (another library version, template set or
 * NVRTC version; other archs stay); *removed = their number (may be NULL). */
FLASHJIT_C_API flashjit_status flashjit_cache_prune(flashjit_engine* engine, int64_t* removed);
FLASHJIT_C_API flashjit_status flashjit_cache_clear(flashjit_engine* engine);

/* Writes the cache's kernels for `arch` to a bundle file (signed when sign_key_pem is set);
 * the bundle's manifest as JSON to buf. */
FLASHJIT_C_API flashjit_status flashjit_bundle_export(flashjit_engine* engine, const char* arch,
                                                      const char* path, const char* sign_key_pem,
                                                      char* buf, size_t buf_size, size_t* needed);
/* Checks a bundle and copies its kernels into the cache; *added = new kernels. */
FLASHJIT_C_API flashjit_status flashjit_bundle_import(flashjit_engine* engine, const char* path,
                                                      const char* arch, int64_t* added);
/* Reads a bundle's manifest and kernel list (JSON, with "ok" and "check") without importing.
 * FLASHJIT_OK even when the bundle would be refused: read "ok". No engine needed. */
FLASHJIT_C_API flashjit_status flashjit_bundle_inspect(const char* path, char* buf, size_t buf_size,
                                                       size_t* needed);
/* flashjit_bundle_inspect with an explicit signature policy (the CLI's --trust-key and
 * --require-signed): trusted_keys is a ':'-separated list of Ed25519 public key PEM files (NULL
 * or "": none); the environment (FLASHJIT_TRUSTED_KEYS) is not read. With keys, "signature" in
 * the JSON says "verified (key <id>)" for a bundle signed by one of them; a bundle signed by
 * another key, or unsigned while require_signed != 0, has "ok": false and the reason in
 * "check". A key file that cannot be read is an error. No engine needed.
 * Engines take the same policy at creation: flashjit_engine_options.trusted_bundle_keys and
 * .require_signed_bundles (used by FLASHJIT_BUNDLES layers and flashjit_bundle_import). */
FLASHJIT_C_API flashjit_status flashjit_bundle_inspect_trusted(const char* path,
                                                               const char* trusted_keys,
                                                               int require_signed, char* buf,
                                                               size_t buf_size, size_t* needed);
/* Writes a new Ed25519 signing key pair (flashjit bundle keygen): private_pem (mode 0600; an
 * existing file is refused) and public_pem (give it to trusted_keys). The key id (16 hex
 * digits) goes to buf (may be NULL). */
FLASHJIT_C_API flashjit_status flashjit_bundle_keygen(const char* private_pem,
                                                      const char* public_pem, char* buf,
                                                      size_t buf_size, size_t* needed);

/* ---- normalization (flashjit/norm.h) ---------------------------------------------------------
 * input/out [tokens, hidden] or [tokens, heads, hidden], f16 or bf16, last dim stride 1;
 * weight [hidden] contiguous, same dtype. out may alias input exactly. eps > 0. */
FLASHJIT_C_API flashjit_status flashjit_rmsnorm(flashjit_engine* engine, const DLTensor* input,
                                                const DLTensor* weight, const DLTensor* out,
                                                float eps, void* stream);
FLASHJIT_C_API flashjit_status flashjit_gemma_rmsnorm(flashjit_engine* engine,
                                                      const DLTensor* input, const DLTensor* weight,
                                                      const DLTensor* out, float eps, void* stream);
/* In place: residual += input; input = rmsnorm(residual). */
FLASHJIT_C_API flashjit_status flashjit_fused_add_rmsnorm(flashjit_engine* engine,
                                                          const DLTensor* input,
                                                          const DLTensor* residual,
                                                          const DLTensor* weight, float eps,
                                                          void* stream);
FLASHJIT_C_API flashjit_status flashjit_gemma_fused_add_rmsnorm(flashjit_engine* engine,
                                                                const DLTensor* input,
                                                                const DLTensor* residual,
                                                                const DLTensor* weight, float eps,
                                                                void* stream);
/* gamma, beta [hidden]: both f32 or both input's dtype. */
FLASHJIT_C_API flashjit_status flashjit_layernorm(flashjit_engine* engine, const DLTensor* input,
                                                  const DLTensor* gamma, const DLTensor* beta,
                                                  const DLTensor* out, float eps, void* stream);

/* ---- rotary embedding (flashjit/rope.h) -------------------------------------------------------
 * q [nnz, Hq, D], k [nnz, Hk, D], f16 or bf16, last dim contiguous. Out-of-place forms write
 * q_rope/k_rope (shapes of q/k); _inplace forms write q and k. */
typedef struct flashjit_rope_options {
  int64_t rotary_dim; /* -1: head_dim */
  int interleave;     /* 0: NeoX halves; 1: GPT-J pairs */
  float rope_scale;
  float rope_theta;
  /* Llama 3.1 only */
  float low_freq_factor;
  float high_freq_factor;
  int64_t old_context_len;
} flashjit_rope_options;
/* Plain RoPE defaults: rotary_dim -1, scale 1, theta 1e4. */
FLASHJIT_C_API void flashjit_rope_options_init(flashjit_rope_options* options);
/* Llama 3.1 defaults: scale 8, theta 5e5, low 1, high 4, old_context_len 8192. */
FLASHJIT_C_API void flashjit_llama31_rope_options_init(flashjit_rope_options* options);

/* indptr int32 [batch + 1], offsets int32 [batch]. options NULL: defaults. */
FLASHJIT_C_API flashjit_status flashjit_apply_rope(flashjit_engine* engine, const DLTensor* q,
                                                   const DLTensor* k, const DLTensor* q_rope,
                                                   const DLTensor* k_rope, const DLTensor* indptr,
                                                   const DLTensor* offsets,
                                                   const flashjit_rope_options* options,
                                                   void* stream);
FLASHJIT_C_API flashjit_status flashjit_apply_rope_inplace(
    flashjit_engine* engine, const DLTensor* q, const DLTensor* k, const DLTensor* indptr,
    const DLTensor* offsets, const flashjit_rope_options* options, void* stream);
/* pos_ids int32 or int64 [nnz]. */
FLASHJIT_C_API flashjit_status
flashjit_apply_rope_pos_ids(flashjit_engine* engine, const DLTensor* q, const DLTensor* k,
                            const DLTensor* q_rope, const DLTensor* k_rope, const DLTensor* pos_ids,
                            const flashjit_rope_options* options, void* stream);
FLASHJIT_C_API flashjit_status flashjit_apply_rope_pos_ids_inplace(
    flashjit_engine* engine, const DLTensor* q, const DLTensor* k, const DLTensor* pos_ids,
    const flashjit_rope_options* options, void* stream);
/* Llama 3.1 forms: options NULL means the Llama 3.1 defaults. */
FLASHJIT_C_API flashjit_status flashjit_apply_llama31_rope(
    flashjit_engine* engine, const DLTensor* q, const DLTensor* k, const DLTensor* q_rope,
    const DLTensor* k_rope, const DLTensor* indptr, const DLTensor* offsets,
    const flashjit_rope_options* options, void* stream);
FLASHJIT_C_API flashjit_status flashjit_apply_llama31_rope_inplace(
    flashjit_engine* engine, const DLTensor* q, const DLTensor* k, const DLTensor* indptr,
    const DLTensor* offsets, const flashjit_rope_options* options, void* stream);
FLASHJIT_C_API flashjit_status flashjit_apply_llama31_rope_pos_ids(
    flashjit_engine* engine, const DLTensor* q, const DLTensor* k, const DLTensor* q_rope,
    const DLTensor* k_rope, const DLTensor* pos_ids, const flashjit_rope_options* options,
    void* stream);
FLASHJIT_C_API flashjit_status flashjit_apply_llama31_rope_pos_ids_inplace(
    flashjit_engine* engine, const DLTensor* q, const DLTensor* k, const DLTensor* pos_ids,
    const flashjit_rope_options* options, void* stream);
/* vLLM-style: positions int32/int64 [nnz]; query [nnz, Hq * head_size] (or 3-D), key likewise;
 * cos_sin_cache f32 [max_position, rotary_dim]. max_position_hint >= 0: the largest position,
 * checked against the cache (-1: unchecked). */
FLASHJIT_C_API flashjit_status flashjit_apply_rope_with_cos_sin_cache(
    flashjit_engine* engine, const DLTensor* positions, const DLTensor* query, const DLTensor* key,
    const DLTensor* query_out, const DLTensor* key_out, int64_t head_size,
    const DLTensor* cos_sin_cache, int is_neox, int64_t max_position_hint, void* stream);
FLASHJIT_C_API flashjit_status flashjit_apply_rope_with_cos_sin_cache_inplace(
    flashjit_engine* engine, const DLTensor* positions, const DLTensor* query, const DLTensor* key,
    int64_t head_size, const DLTensor* cos_sin_cache, int is_neox, int64_t max_position_hint,
    void* stream);

/* ---- gated activations (flashjit/activation.h) -----------------------------------------------
 * input [tokens, 2d], out [tokens, d], same dtype (f16/bf16), no overlap. */
FLASHJIT_C_API flashjit_status flashjit_silu_and_mul(flashjit_engine* engine, const DLTensor* input,
                                                     const DLTensor* out, void* stream);
FLASHJIT_C_API flashjit_status flashjit_gelu_and_mul(flashjit_engine* engine, const DLTensor* input,
                                                     const DLTensor* out, void* stream);
FLASHJIT_C_API flashjit_status flashjit_gelu_tanh_and_mul(flashjit_engine* engine,
                                                          const DLTensor* input,
                                                          const DLTensor* out, void* stream);

/* ---- attention-state merges (flashjit/cascade.h) ----------------------------------------------
 * A state: v [seq, heads, head_dim] (f16/bf16/f32) and s [seq, heads] f32, the base-2
 * log-sum-exp behind v. Merged: s = log2(sum 2^s_i), v = sum 2^(s_i - s) v_i; -inf states add
 * nothing (all -inf: v = 0, s = -inf); a NaN or +inf s_i makes the row NaN. s_out and mask may
 * be NULL. v_out / s_out may be an input itself; no other sharing of memory is accepted. */
FLASHJIT_C_API flashjit_status flashjit_merge_state(flashjit_engine* engine, const DLTensor* v_a,
                                                    const DLTensor* s_a, const DLTensor* v_b,
                                                    const DLTensor* s_b, const DLTensor* v_out,
                                                    const DLTensor* s_out, void* stream);
/* (v, s) <- merge((v, s), (v_other, s_other)) for every seq whose mask (bool/u8 [seq]) is set. */
FLASHJIT_C_API flashjit_status flashjit_merge_state_in_place(flashjit_engine* engine,
                                                             const DLTensor* v, const DLTensor* s,
                                                             const DLTensor* v_other,
                                                             const DLTensor* s_other,
                                                             const DLTensor* mask, void* stream);
/* v [seq, num_states, heads, head_dim], s [seq, num_states, heads] -> v_out, s_out. */
FLASHJIT_C_API flashjit_status flashjit_merge_states(flashjit_engine* engine, const DLTensor* v,
                                                     const DLTensor* s, const DLTensor* v_out,
                                                     const DLTensor* s_out, void* stream);

/* ---- paged KV cache (flashjit/page.h) -------------------------------------------------------- */

typedef enum flashjit_kv_layout {
  FLASHJIT_KV_LAYOUT_NHD = 0, /* [.., tokens/page_size, heads, head_dim] */
  FLASHJIT_KV_LAYOUT_HND = 1, /* [.., heads, tokens/page_size, head_dim] */
} flashjit_kv_layout;

/* append_key/value [nnz, Hkv, D] f16/bf16; batch_indices, positions int32 [nnz]; k_cache and
 * v_cache 4-D in `layout` (f16/bf16 as the rows, or fp8 e4m3/e5m2 storing value / scale);
 * kv_indices int32, kv_indptr int32 [batch + 1], kv_last_page_len int32 [batch]. */
FLASHJIT_C_API flashjit_status flashjit_append_paged_kv_cache(
    flashjit_engine* engine, const DLTensor* append_key, const DLTensor* append_value,
    const DLTensor* batch_indices, const DLTensor* positions, const DLTensor* k_cache,
    const DLTensor* v_cache, const DLTensor* kv_indices, const DLTensor* kv_indptr,
    const DLTensor* kv_last_page_len, flashjit_kv_layout layout, float k_scale, float v_scale,
    void* stream);
/* One combined cache [num_pages, 2, ...]: index 0 of dim 1 is K, 1 is V. */
FLASHJIT_C_API flashjit_status flashjit_append_paged_kv_cache_combined(
    flashjit_engine* engine, const DLTensor* append_key, const DLTensor* append_value,
    const DLTensor* batch_indices, const DLTensor* positions, const DLTensor* paged_kv_cache,
    const DLTensor* kv_indices, const DLTensor* kv_indptr, const DLTensor* kv_last_page_len,
    flashjit_kv_layout layout, float k_scale, float v_scale, void* stream);
/* append_indptr int32 [batch + 1], seq_lens int32 [batch] -> batch_indices, positions int32
 * [nnz]. */
FLASHJIT_C_API flashjit_status flashjit_get_batch_indices_positions(
    flashjit_engine* engine, const DLTensor* append_indptr, const DLTensor* seq_lens,
    const DLTensor* batch_indices, const DLTensor* positions, void* stream);

/* ---- sampling (flashjit/sampling.h) ----------------------------------------------------------
 * probs [rows, vocab] f32, logits f32/f16/bf16; samples int32 [batch]. Optional tensors may be
 * NULL. A per-row parameter tensor (top_k_arr int32, top_p_arr / min_p_arr f32 [batch]) wins
 * over the scalar when given. */
typedef struct flashjit_sampling_args {
  const DLTensor* indices; /* optional int32/int64 [batch]: output row r reads row indices[r] */
  const DLTensor* valid;   /* optional output uint8/bool [batch]: 1 for valid rows */
  uint64_t seed;
  uint64_t offset;
  const void* seed_device;   /* optional uint64 in device memory (read by the kernel) */
  const void* offset_device; /* optional uint64 in device memory */
} flashjit_sampling_args;

typedef enum flashjit_filter_apply_order {
  FLASHJIT_FILTER_TOP_K_FIRST = 0,
  FLASHJIT_FILTER_JOINT = 1,
} flashjit_filter_apply_order;

/* out f32 = softmax(logits / temperature); temperature_arr optional f32 [batch]. */
FLASHJIT_C_API flashjit_status flashjit_softmax(flashjit_engine* engine, const DLTensor* logits,
                                                const DLTensor* out, float temperature,
                                                const DLTensor* temperature_arr, void* stream);
/* args may be NULL (no indices, no valid output, seed 0, offset 0). */
FLASHJIT_C_API flashjit_status flashjit_sampling_from_probs(flashjit_engine* engine,
                                                            const DLTensor* probs,
                                                            const DLTensor* samples,
                                                            const flashjit_sampling_args* args,
                                                            void* stream);
FLASHJIT_C_API flashjit_status flashjit_sampling_from_logits(flashjit_engine* engine,
                                                             const DLTensor* logits,
                                                             const DLTensor* samples,
                                                             const flashjit_sampling_args* args,
                                                             void* stream);
FLASHJIT_C_API flashjit_status flashjit_top_k_sampling_from_probs(
    flashjit_engine* engine, const DLTensor* probs, const DLTensor* samples, int top_k,
    const DLTensor* top_k_arr, const flashjit_sampling_args* args, void* stream);
FLASHJIT_C_API flashjit_status flashjit_top_p_sampling_from_probs(
    flashjit_engine* engine, const DLTensor* probs, const DLTensor* samples, float top_p,
    const DLTensor* top_p_arr, const flashjit_sampling_args* args, void* stream);
FLASHJIT_C_API flashjit_status flashjit_min_p_sampling_from_probs(
    flashjit_engine* engine, const DLTensor* probs, const DLTensor* samples, float min_p,
    const DLTensor* min_p_arr, const flashjit_sampling_args* args, void* stream);
FLASHJIT_C_API flashjit_status flashjit_top_k_top_p_sampling_from_probs(
    flashjit_engine* engine, const DLTensor* probs, const DLTensor* samples, int top_k,
    const DLTensor* top_k_arr, float top_p, const DLTensor* top_p_arr,
    flashjit_filter_apply_order order, const flashjit_sampling_args* args, void* stream);
FLASHJIT_C_API flashjit_status flashjit_top_k_top_p_sampling_from_logits(
    flashjit_engine* engine, const DLTensor* logits, const DLTensor* samples, int top_k,
    const DLTensor* top_k_arr, float top_p, const DLTensor* top_p_arr,
    flashjit_filter_apply_order order, const flashjit_sampling_args* args, void* stream);
FLASHJIT_C_API flashjit_status flashjit_top_k_renorm_probs(flashjit_engine* engine,
                                                           const DLTensor* probs,
                                                           const DLTensor* out, int top_k,
                                                           const DLTensor* top_k_arr, void* stream);
FLASHJIT_C_API flashjit_status flashjit_top_p_renorm_probs(flashjit_engine* engine,
                                                           const DLTensor* probs,
                                                           const DLTensor* out, float top_p,
                                                           const DLTensor* top_p_arr, void* stream);
FLASHJIT_C_API flashjit_status flashjit_top_k_mask_logits(flashjit_engine* engine,
                                                          const DLTensor* logits,
                                                          const DLTensor* out, int top_k,
                                                          const DLTensor* top_k_arr, void* stream);
/* draft_probs f32 [b, n, V], draft_token_ids int32 [b, n], target_probs f32 [b, n + 1, V] ->
 * output_token_ids int32 [b, n + 1]; the two counters (int32 [b]) are optional, accumulated. */
FLASHJIT_C_API flashjit_status flashjit_chain_speculative_sampling(
    flashjit_engine* engine, const DLTensor* draft_probs, const DLTensor* draft_token_ids,
    const DLTensor* target_probs, const DLTensor* output_token_ids,
    const DLTensor* accepted_token_num, const DLTensor* emitted_draft_token_num, uint64_t seed,
    uint64_t offset, void* stream);

/* ---- decode attention (flashjit/decode.h) ---------------------------------------------------- */

typedef struct flashjit_decode_options {
  float sm_scale;        /* 0: 1 / sqrt(head_dim) */
  float logits_soft_cap; /* > 0: cap * tanh(logits / cap) */
  int32_t window_left;   /* -1: no window */
  int alibi;
  int rope; /* RoPE (rotate halves) applied in-kernel to q and k */
  float rope_scale;
  float rope_theta;
  float k_scale;
  float v_scale;
  const DLTensor* sinks; /* optional f32 [num_qo_heads] */
} flashjit_decode_options;
FLASHJIT_C_API void flashjit_decode_options_init(flashjit_decode_options* options);

/* Workspace bytes with which single decode may split a long KV over all SMs. */
FLASHJIT_C_API size_t flashjit_single_decode_workspace_bytes(int64_t num_qo_heads,
                                                             int64_t head_dim);
/* q [Hq, D]; k, v [kv_len, Hkv, D] (NHD) or [Hkv, kv_len, D] (HND); out like q; lse optional
 * f32 [Hq] (base 2). options NULL: defaults. workspace may be NULL (no split). */
FLASHJIT_C_API flashjit_status flashjit_single_decode(
    flashjit_engine* engine, const DLTensor* q, const DLTensor* k, const DLTensor* v,
    const DLTensor* out, const DLTensor* lse, flashjit_kv_layout layout,
    const flashjit_decode_options* options, void* workspace, size_t workspace_bytes, void* stream);

typedef struct flashjit_batch_decode flashjit_batch_decode;

/* dtype codes for the config: DLPack's (code, bits) pairs. */
typedef struct flashjit_batch_decode_config {
  int32_t num_qo_heads;
  int32_t num_kv_heads;
  int32_t head_dim;
  int32_t page_size;
  DLDataType q_dtype;  /* f16 or bf16 */
  DLDataType kv_dtype; /* q's, or fp8 (FLASHJIT_DL_FLOAT8_E4M3FN / _E5M2, 8 bits) */
  flashjit_kv_layout layout;
  int32_t device;
  int32_t max_batch_size; /* sizes the workspace */
  int cuda_graph;         /* fixed grids reading the plan from the workspace */
} flashjit_batch_decode_config;
/* head_dim 128, page_size 16, bf16/bf16, NHD, device 0, max_batch_size 256, no graph. */
FLASHJIT_C_API void flashjit_batch_decode_config_init(flashjit_batch_decode_config* config);

FLASHJIT_C_API flashjit_status
flashjit_batch_decode_create(flashjit_engine* engine, const flashjit_batch_decode_config* config,
                             flashjit_batch_decode** wrapper);
FLASHJIT_C_API flashjit_status flashjit_batch_decode_destroy(flashjit_batch_decode* wrapper);
FLASHJIT_C_API flashjit_status flashjit_batch_decode_workspace_bytes(flashjit_batch_decode* wrapper,
                                                                     size_t* bytes);
/* Host arrays: kv_indptr [batch + 1], kv_last_page_len [batch]; kv_indices (host, optional,
 * with num_pages > 0) is range-checked. The schedule is copied into workspace on stream. */
FLASHJIT_C_API flashjit_status flashjit_batch_decode_plan(
    flashjit_batch_decode* wrapper, const int32_t* kv_indptr, const int32_t* kv_last_page_len,
    int32_t batch_size, const flashjit_decode_options* options, void* workspace,
    size_t workspace_bytes, const int32_t* kv_indices, int64_t num_pages, void* stream);
/* q [batch, Hq, D]; k_cache, v_cache [pages, page_size, Hkv, D] (NHD) or [pages, Hkv,
 * page_size, D] (HND), equal strides; kv_indices int32 on the device; out like q; lse optional
 * f32 [batch, Hq]. No allocation, no sync, no compile: capturable in a CUDA graph. */
FLASHJIT_C_API flashjit_status flashjit_batch_decode_run(flashjit_batch_decode* wrapper,
                                                         const DLTensor* q, const DLTensor* k_cache,
                                                         const DLTensor* v_cache,
                                                         const DLTensor* kv_indices,
                                                         const DLTensor* out, const DLTensor* lse,
                                                         void* stream);
/* The same with one combined cache [pages, 2, ...] (index 0 of dim 1 is K). */
FLASHJIT_C_API flashjit_status flashjit_batch_decode_run_combined(
    flashjit_batch_decode* wrapper, const DLTensor* q, const DLTensor* paged_kv_cache,
    const DLTensor* kv_indices, const DLTensor* out, const DLTensor* lse, void* stream);

/* ---- packed calls: one argument block per op call (for FFI callers) -------------------------
 * An FFI such as Python's ctypes pays for every argument it converts and every DLTensor it
 * builds; a packed call passes one pointer. The caller fills a flashjit_packed_call: the op, the
 * handle, the stream, the op's scalars in f[] (floating point) and i[] (integers, enums, pointers
 * and 64-bit seeds as their bit pattern), and one flashjit_packed_tensor per tensor argument, in
 * the order of the plain function's parameters (tables in docs/API_C.md). The block is read only
 * during the call; one per thread can be reused call after call.
 *
 * The call is exactly the plain function (flashjit_rmsnorm, ...) with those arguments: the same
 * checks, statuses and messages (prefixed with the plain function's name). The block itself is
 * checked first: an unknown op, a tensor count that differs from the op's, an ndim outside the
 * allowed values or a scalar that does not fit its C type is FLASHJIT_INVALID_ARGUMENT naming
 * the op and the argument. */
#define FLASHJIT_PACKED_MAX_TENSORS 12
#define FLASHJIT_PACKED_MAX_DIMS 6
#define FLASHJIT_PACKED_NUM_SCALARS 8
#define FLASHJIT_PACKED_ABSENT (-1)   /* ndim: an optional tensor passed as NULL */
#define FLASHJIT_PACKED_DLTENSOR (-2) /* ndim: `data` is a const DLTensor* used as is */

/* A DLTensor without pointers: shape and strides inline (strides in elements, always given). */
typedef struct flashjit_packed_tensor {
  void* data; /* the first element (any byte offset already added) */
  int32_t device_type;
  int32_t device_id;
  int32_t
      ndim; /* 0..FLASHJIT_PACKED_MAX_DIMS, FLASHJIT_PACKED_ABSENT or FLASHJIT_PACKED_DLTENSOR */
  DLDataType dtype;
  int64_t shape[FLASHJIT_PACKED_MAX_DIMS];   /* the first ndim are read */
  int64_t strides[FLASHJIT_PACKED_MAX_DIMS]; /* the first ndim are read */
} flashjit_packed_tensor;                    /* 120 bytes */

/* Stable numbers (never reused). Scalars per op: see docs/API_C.md, "Packed calls". */
typedef enum flashjit_packed_op {
  FLASHJIT_OP_RMSNORM = 1,
  FLASHJIT_OP_GEMMA_RMSNORM = 2,
  FLASHJIT_OP_FUSED_ADD_RMSNORM = 3,
  FLASHJIT_OP_GEMMA_FUSED_ADD_RMSNORM = 4,
  FLASHJIT_OP_LAYERNORM = 5,
  FLASHJIT_OP_APPLY_ROPE = 10,
  FLASHJIT_OP_APPLY_ROPE_INPLACE = 11,
  FLASHJIT_OP_APPLY_ROPE_POS_IDS = 12,
  FLASHJIT_OP_APPLY_ROPE_POS_IDS_INPLACE = 13,
  FLASHJIT_OP_APPLY_LLAMA31_ROPE = 14,
  FLASHJIT_OP_APPLY_LLAMA31_ROPE_INPLACE = 15,
  FLASHJIT_OP_APPLY_LLAMA31_ROPE_POS_IDS = 16,
  FLASHJIT_OP_APPLY_LLAMA31_ROPE_POS_IDS_INPLACE = 17,
  FLASHJIT_OP_APPLY_ROPE_WITH_COS_SIN_CACHE = 18,
  FLASHJIT_OP_APPLY_ROPE_WITH_COS_SIN_CACHE_INPLACE = 19,
  FLASHJIT_OP_SILU_AND_MUL = 30,
  FLASHJIT_OP_GELU_AND_MUL = 31,
  FLASHJIT_OP_GELU_TANH_AND_MUL = 32,
  FLASHJIT_OP_APPEND_PAGED_KV_CACHE = 40,
  FLASHJIT_OP_APPEND_PAGED_KV_CACHE_COMBINED = 41,
  FLASHJIT_OP_GET_BATCH_INDICES_POSITIONS = 42,
  FLASHJIT_OP_SOFTMAX = 50,
  FLASHJIT_OP_SAMPLING_FROM_PROBS = 51,
  FLASHJIT_OP_SAMPLING_FROM_LOGITS = 52,
  FLASHJIT_OP_TOP_K_SAMPLING_FROM_PROBS = 53,
  FLASHJIT_OP_TOP_P_SAMPLING_FROM_PROBS = 54,
  FLASHJIT_OP_MIN_P_SAMPLING_FROM_PROBS = 55,
  FLASHJIT_OP_TOP_K_TOP_P_SAMPLING_FROM_PROBS = 56,
  FLASHJIT_OP_TOP_K_TOP_P_SAMPLING_FROM_LOGITS = 57,
  FLASHJIT_OP_TOP_K_RENORM_PROBS = 58,
  FLASHJIT_OP_TOP_P_RENORM_PROBS = 59,
  FLASHJIT_OP_TOP_K_MASK_LOGITS = 60,
  FLASHJIT_OP_CHAIN_SPECULATIVE_SAMPLING = 61,
  FLASHJIT_OP_SINGLE_DECODE = 70,
  FLASHJIT_OP_BATCH_DECODE_RUN = 71,
  FLASHJIT_OP_BATCH_DECODE_RUN_COMBINED = 72,
  FLASHJIT_OP_MERGE_STATE = 80,
  FLASHJIT_OP_MERGE_STATE_IN_PLACE = 81,
  FLASHJIT_OP_MERGE_STATES = 82,
} flashjit_packed_op;

typedef struct flashjit_packed_call {
  int32_t op; /* flashjit_packed_op */
  int32_t num_tensors;
  void* handle; /* flashjit_engine*, or flashjit_batch_decode* for FLASHJIT_OP_BATCH_DECODE_RUN* */
  void* stream;
  double f[FLASHJIT_PACKED_NUM_SCALARS];
  int64_t i[FLASHJIT_PACKED_NUM_SCALARS];
  flashjit_packed_tensor tensors[FLASHJIT_PACKED_MAX_TENSORS]; /* the first num_tensors */
} flashjit_packed_call; /* header 152 bytes, then the tensors */

FLASHJIT_C_API flashjit_status flashjit_call_packed(const flashjit_packed_call* call);
/* The op's name ("rmsnorm") and its tensor count, or NULL / -1 for an unknown op. */
FLASHJIT_C_API const char* flashjit_packed_op_name(int32_t op);
FLASHJIT_C_API int32_t flashjit_packed_op_num_tensors(int32_t op);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLASHJIT_FLASHJIT_H_ */
