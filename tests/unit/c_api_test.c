/* The C ABI, compiled as C99 and linked against the shared libflashjit.so.
 *
 * Needs no GPU: engines are dry runs for sm_90a (ops validate and build their kernels, then
 * return without launching), so tensor data pointers are fake, aligned addresses.
 * Usage: flashjit_c_api_test SCRATCH_DIR (a writable directory for caches and bundles). */
#include <flashjit/flashjit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    ++g_checks;                                                                               \
    if (!(cond)) {                                                                            \
      ++g_failures;                                                                           \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              flashjit_last_error());                                                         \
    }                                                                                         \
  } while (0)

/* A call must fail with `code` and leave a message containing `needle`. */
#define EXPECT_FAIL(call, code, needle)                                                         \
  do {                                                                                          \
    flashjit_status st_ = (call);                                                               \
    ++g_checks;                                                                                 \
    if (st_ != (code) || strstr(flashjit_last_error(), (needle)) == NULL) {                     \
      ++g_failures;                                                                             \
      fprintf(stderr, "%s:%d: %s returned %s (want %s); message: %s (want \"%s\")\n", __FILE__, \
              __LINE__, #call, flashjit_status_name(st_), flashjit_status_name(code),           \
              flashjit_last_error(), (needle));                                                 \
    }                                                                                           \
  } while (0)

#define EXPECT_OK(call)                                                         \
  do {                                                                          \
    flashjit_status st_ = (call);                                               \
    ++g_checks;                                                                 \
    if (st_ != FLASHJIT_OK) {                                                   \
      ++g_failures;                                                             \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, \
              flashjit_status_name(st_), flashjit_last_error());                \
    }                                                                           \
  } while (0)

/* ---- tensors with fake device addresses --------------------------------------------------- */

typedef struct {
  DLTensor t;
  int64_t shape[6];
  int64_t strides[6];
} Tensor;

static const DLDataType kBF16 = {kDLBfloat, 16, 1};
static const DLDataType kF16 = {kDLFloat, 16, 1};
static const DLDataType kF32 = {kDLFloat, 32, 1};
static const DLDataType kI32 = {kDLInt, 32, 1};
static const DLDataType kF64 = {kDLFloat, 64, 1};

static uintptr_t g_next_address = 0x7f0000000000ull;

static int64_t g_shape_pool[6 * 256];
static int g_shape_used = 0;

/* A contiguous tensor (strides NULL) at a fresh, aligned fake address. Its shape lives in a
 * static pool so that copies of the struct stay valid; a copy that changes its shape points
 * t.shape at its own array first. */
static Tensor Make(DLDataType dtype, int ndim, const int64_t* shape) {
  Tensor x;
  int i;
  int64_t* pooled = &g_shape_pool[g_shape_used];
  g_shape_used += 6;
  memset(&x, 0, sizeof(x));
  for (i = 0; i < ndim; ++i) x.shape[i] = pooled[i] = shape[i];
  x.t.data = (void*)g_next_address;
  g_next_address += (uintptr_t)1 << 32;
  x.t.device.device_type = kDLCUDA;
  x.t.device.device_id = 0;
  x.t.ndim = ndim;
  x.t.dtype = dtype;
  x.t.shape = pooled;
  x.t.strides = NULL;
  x.t.byte_offset = 0;
  return x;
}

/* The same tensor with explicit row-major strides (so that tests can then break them). */
static void WithStrides(Tensor* x) {
  int64_t s = 1;
  int i;
  for (i = x->t.ndim - 1; i >= 0; --i) {
    x->strides[i] = s;
    s *= x->shape[i];
  }
  x->t.strides = x->strides;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void TestBasics(void) {
  CHECK(strcmp(flashjit_status_name(FLASHJIT_OK), "OK") == 0);
  CHECK(strcmp(flashjit_status_name(FLASHJIT_INVALID_ARGUMENT), "InvalidArgument") == 0);
  CHECK(strcmp(flashjit_status_name(FLASHJIT_INVALID_HANDLE), "InvalidHandle") == 0);
  CHECK(strcmp(flashjit_status_name((flashjit_status)999), "Unknown") == 0);
  CHECK(flashjit_abi_version() == FLASHJIT_C_ABI_VERSION);
  CHECK(strlen(flashjit_version()) > 0);
  CHECK(flashjit_last_error() != NULL);
}

static void TestEngineErrors(const char* scratch) {
  flashjit_engine_options o;
  flashjit_engine* e = NULL;
  char path[4096];
  EXPECT_FAIL(flashjit_engine_create(NULL, NULL), FLASHJIT_INVALID_ARGUMENT, "NULL");
  flashjit_engine_options_init(&o);
  o.struct_size = 3;
  EXPECT_FAIL(flashjit_engine_create(&o, &e), FLASHJIT_INVALID_ARGUMENT, "struct_size");
  CHECK(e == NULL);
  flashjit_engine_options_init(&o);
  o.read_environment = 0;
  o.dry_run = 1; /* without an arch: refused */
  snprintf(path, sizeof(path), "%s/cache-errors", scratch);
  o.cache_dir = path;
  EXPECT_FAIL(flashjit_engine_create(&o, &e), FLASHJIT_INVALID_ARGUMENT, "arch");
  /* Handles that are not live. */
  EXPECT_FAIL(flashjit_engine_show_config(NULL, NULL, 0, NULL), FLASHJIT_INVALID_HANDLE, "NULL");
  {
    char fake[64];
    memset(fake, 0, sizeof(fake));
    EXPECT_FAIL(flashjit_cache_clear((flashjit_engine*)fake), FLASHJIT_INVALID_HANDLE, "not live");
    EXPECT_FAIL(flashjit_engine_destroy((flashjit_engine*)fake), FLASHJIT_INVALID_HANDLE,
                "not live");
  }
  EXPECT_OK(flashjit_engine_destroy(NULL));
}

static flashjit_engine* DryRunEngine(const char* cache_dir) {
  flashjit_engine_options o;
  flashjit_engine* e = NULL;
  flashjit_engine_options_init(&o);
  o.read_environment = 0;
  o.dry_run = 1;
  o.arch = "sm_90a";
  o.cache_dir = cache_dir;
  EXPECT_OK(flashjit_engine_create(&o, &e));
  return e;
}

static int Contains(const char* text, const char* needle) { return strstr(text, needle) != NULL; }

static void TestEngineAndCache(const char* scratch) {
  char dir[4096], bundle[4096], small[8];
  char* buf;
  size_t needed = 0, needed2 = 0;
  int64_t rows = -1, bad = -1, removed = -1, evicted = -1, added = -1;
  flashjit_engine_stats stats;
  flashjit_engine* e;
  const char* spec = "{\"op\": \"rmsnorm\", \"dtype\": \"bf16\"}";

  snprintf(dir, sizeof(dir), "%s/cache-a", scratch);
  snprintf(bundle, sizeof(bundle), "%s/a.fjbundle", scratch);
  e = DryRunEngine(dir);
  if (!e) return;

  /* show-config: size query, too small, exact. */
  EXPECT_OK(flashjit_engine_show_config(e, NULL, 0, &needed));
  CHECK(needed > 10);
  EXPECT_FAIL(flashjit_engine_show_config(e, small, sizeof(small), &needed2),
              FLASHJIT_BUFFER_TOO_SMALL, "bytes");
  CHECK(needed2 == needed && small[sizeof(small) - 1] == '\0');
  buf = (char*)malloc(needed);
  EXPECT_OK(flashjit_engine_show_config(e, buf, needed, NULL));
  CHECK(Contains(buf, "\"library_version\"") && Contains(buf, "sm_90a") &&
        Contains(buf, "\"dry_run\": true"));
  free(buf);

  EXPECT_OK(flashjit_spec_ops(NULL, 0, &needed));
  buf = (char*)malloc(needed);
  EXPECT_OK(flashjit_spec_ops(buf, needed, NULL));
  CHECK(Contains(buf, "rmsnorm"));
  free(buf);

  /* render / build a spec, bad spec. */
  EXPECT_OK(flashjit_engine_render(e, spec, NULL, 0, &needed));
  buf = (char*)malloc(needed);
  EXPECT_OK(flashjit_engine_render(e, spec, buf, needed, NULL));
  CHECK(Contains(buf, "__global__"));
  free(buf);
  EXPECT_FAIL(flashjit_engine_render(e, "{\"op\": \"nope\"}", NULL, 0, NULL),
              FLASHJIT_INVALID_ARGUMENT, "nope");
  EXPECT_FAIL(flashjit_engine_build(e, NULL, NULL, NULL, 0, NULL), FLASHJIT_INVALID_ARGUMENT,
              "spec_json");
  {
    char info[4096];
    EXPECT_OK(flashjit_engine_build(e, spec, NULL, info, sizeof(info), &needed));
    CHECK(needed <= sizeof(info) && Contains(info, "\"key\""));
  }
  EXPECT_OK(flashjit_engine_get_stats(e, &stats));
  CHECK(stats.compiles + stats.cache_hits >= 1);

  /* cache ls / verify / gc. */
  EXPECT_OK(flashjit_cache_ls(e, NULL, 0, &needed));
  buf = (char*)malloc(needed);
  EXPECT_OK(flashjit_cache_ls(e, buf, needed, NULL));
  CHECK(Contains(buf, "rmsnorm"));
  free(buf);
  EXPECT_OK(flashjit_cache_verify(e, 0, &rows, &bad, &removed, NULL, 0, &needed));
  CHECK(rows >= 1 && bad == 0 && removed == 0 && needed > 1);
  EXPECT_FAIL(flashjit_cache_gc(e, -1, &evicted), FLASHJIT_INVALID_ARGUMENT, "max_bytes");
  EXPECT_OK(flashjit_cache_gc(e, (int64_t)1 << 40, &evicted));
  CHECK(evicted == 0);
  removed = -1;
  EXPECT_OK(flashjit_cache_prune(e, &removed));
  CHECK(removed == 0); /* every kernel is this library's */
  EXPECT_OK(flashjit_cache_prune(e, NULL));

  /* bundle export / inspect / clear / import. */
  remove(bundle);
  EXPECT_FAIL(flashjit_bundle_export(e, NULL, bundle, NULL, NULL, 0, NULL),
              FLASHJIT_INVALID_ARGUMENT, "arch");
  EXPECT_OK(flashjit_bundle_export(e, "sm_90a", bundle, NULL, NULL, 0, &needed));
  CHECK(needed > 1);
  EXPECT_OK(flashjit_bundle_inspect(bundle, NULL, 0, &needed));
  buf = (char*)malloc(needed);
  EXPECT_OK(flashjit_bundle_inspect(bundle, buf, needed, NULL));
  CHECK(Contains(buf, "\"ok\": true") && Contains(buf, "rmsnorm"));
  free(buf);
  EXPECT_FAIL(flashjit_bundle_inspect(NULL, NULL, 0, NULL), FLASHJIT_INVALID_ARGUMENT, "path");
  {
    char missing[4096];
    snprintf(missing, sizeof(missing), "%s/no-such.fjbundle", scratch);
    CHECK(flashjit_bundle_inspect(missing, NULL, 0, NULL) != FLASHJIT_OK);
  }
  EXPECT_OK(flashjit_cache_clear(e));
  EXPECT_OK(flashjit_cache_verify(e, 1, &rows, NULL, NULL, NULL, 0, NULL));
  CHECK(rows == 0);
  EXPECT_OK(flashjit_bundle_import(e, bundle, "sm_90a", &added));
  CHECK(added >= 1);

  /* A destroyed engine is an error, not a crash. */
  EXPECT_OK(flashjit_engine_destroy(e));
  EXPECT_FAIL(flashjit_cache_ls(e, NULL, 0, NULL), FLASHJIT_INVALID_HANDLE, "not live");
  EXPECT_FAIL(flashjit_cache_prune(e, NULL), FLASHJIT_INVALID_HANDLE, "not live");
  EXPECT_FAIL(flashjit_engine_destroy(e), FLASHJIT_INVALID_HANDLE, "not live");
}

static void TestTensorValidation(flashjit_engine* e) {
  const int64_t xs[2] = {4, 4096}, ws[1] = {4096};
  Tensor x = Make(kBF16, 2, xs), w = Make(kBF16, 1, ws), out = Make(kBF16, 2, xs);
  Tensor bad;
  flashjit_engine* dead;
  char dir[64];

  EXPECT_OK(flashjit_rmsnorm(e, &x.t, &w.t, &out.t, 1e-6f, NULL));
  EXPECT_OK(flashjit_gemma_rmsnorm(e, &x.t, &w.t, &out.t, 1e-6f, NULL));
  EXPECT_OK(flashjit_fused_add_rmsnorm(e, &x.t, &out.t, &w.t, 1e-6f, NULL));
  /* NULL tensor, NULL engine. */
  EXPECT_FAIL(flashjit_rmsnorm(e, NULL, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "input");
  EXPECT_FAIL(flashjit_rmsnorm(NULL, &x.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_HANDLE,
              "NULL");
  /* Wrong dtype: unknown to flashjit, and known but not allowed here. */
  bad = x;
  bad.t.shape = bad.shape;
  bad.t.dtype = kF64;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "input");
  bad.t.dtype = kI32;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "input");
  bad.t.dtype = kBF16;
  bad.t.dtype.lanes = 2;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "lanes");
  /* Wrong device. */
  bad = x;
  bad.t.shape = bad.shape;
  bad.t.device.device_type = kDLCPU;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "CUDA");
  /* Wrong strides: the hidden dim not contiguous. */
  bad = x;
  bad.t.shape = bad.shape;
  WithStrides(&bad);
  EXPECT_OK(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL)); /* explicit, row-major */
  bad.strides[1] = 2;
  bad.strides[0] = 8192;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "input");
  /* Wrong shape, too many dims, NULL shape. */
  bad = x;
  bad.t.shape = bad.shape;
  bad.shape[1] = 4095;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "");
  bad.t.ndim = 9;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "ndim");
  bad.t.ndim = 2;
  bad.t.shape = NULL;
  EXPECT_FAIL(flashjit_rmsnorm(e, &bad.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_ARGUMENT,
              "shape");
  /* eps <= 0. */
  EXPECT_FAIL(flashjit_rmsnorm(e, &x.t, &w.t, &out.t, 0.f, NULL), FLASHJIT_INVALID_ARGUMENT, "eps");
  /* byte_offset is honoured: moves data off its 16-byte alignment (still valid for norm). */
  bad = x;
  bad.t.shape = bad.shape;
  bad.t.byte_offset = 2;
  EXPECT_OK(flashjit_rmsnorm(e, &bad.t, &w.t, &bad.t, 1e-6f, NULL));

  /* A destroyed engine. */
  snprintf(dir, sizeof(dir), "%s", "");
  {
    flashjit_engine_options o;
    flashjit_engine_options_init(&o);
    o.read_environment = 0;
    o.dry_run = 1;
    o.arch = "sm_90a";
    o.disable_cache = 1;
    EXPECT_OK(flashjit_engine_create(&o, &dead));
    EXPECT_OK(flashjit_engine_destroy(dead));
    EXPECT_FAIL(flashjit_rmsnorm(dead, &x.t, &w.t, &out.t, 1e-6f, NULL), FLASHJIT_INVALID_HANDLE,
                "not live");
  }
}

static void TestLayerOps(flashjit_engine* e) {
  const int64_t in_s[2] = {4, 2048}, out_s[2] = {4, 1024}, g_s[1] = {1024};
  const int64_t q_s[3] = {4, 32, 128}, k_s[3] = {4, 8, 128}, n_s[1] = {4}, b_s[1] = {2},
                ip_s[1] = {3};
  Tensor in = Make(kBF16, 2, in_s), out = Make(kBF16, 2, out_s), bad_out = Make(kF32, 2, out_s);
  Tensor lx = Make(kF16, 2, out_s), gamma = Make(kF32, 1, g_s), beta = Make(kF32, 1, g_s);
  Tensor q = Make(kBF16, 3, q_s), k = Make(kBF16, 3, k_s), qr = Make(kBF16, 3, q_s),
         kr = Make(kBF16, 3, k_s);
  Tensor pos = Make(kI32, 1, n_s), pos_f = Make(kF32, 1, n_s), indptr = Make(kI32, 1, ip_s),
         offsets = Make(kI32, 1, b_s);
  flashjit_rope_options ro;

  /* activations */
  EXPECT_OK(flashjit_silu_and_mul(e, &in.t, &out.t, NULL));
  EXPECT_OK(flashjit_gelu_and_mul(e, &in.t, &out.t, NULL));
  EXPECT_OK(flashjit_gelu_tanh_and_mul(e, &in.t, &out.t, NULL));
  EXPECT_FAIL(flashjit_silu_and_mul(e, &in.t, &bad_out.t, NULL), FLASHJIT_INVALID_ARGUMENT, "out");
  EXPECT_FAIL(flashjit_silu_and_mul(e, &in.t, NULL, NULL), FLASHJIT_INVALID_ARGUMENT, "out");
  /* attention-state merges: valid calls build and "launch" in the dry run; errors name the
   * argument; s_out and mask may be NULL */
  {
    const int64_t v_s[3] = {4, 8, 128}, st_s[2] = {4, 8}, vn_s[4] = {4, 3, 8, 128},
                  sn_s[3] = {4, 3, 8}, m_s[1] = {4};
    Tensor va = Make(kBF16, 3, v_s), vb = Make(kBF16, 3, v_s), vo = Make(kBF16, 3, v_s);
    Tensor sa = Make(kF32, 2, st_s), sb = Make(kF32, 2, st_s), so = Make(kF32, 2, st_s);
    Tensor vn = Make(kBF16, 4, vn_s), sn = Make(kF32, 3, sn_s), mask = Make(kI32, 1, m_s);
    EXPECT_OK(flashjit_merge_state(e, &va.t, &sa.t, &vb.t, &sb.t, &vo.t, &so.t, NULL));
    EXPECT_OK(flashjit_merge_state(e, &va.t, &sa.t, &vb.t, &sb.t, &vo.t, NULL, NULL));
    EXPECT_OK(flashjit_merge_state_in_place(e, &va.t, &sa.t, &vb.t, &sb.t, NULL, NULL));
    EXPECT_OK(flashjit_merge_states(e, &vn.t, &sn.t, &vo.t, &so.t, NULL));
    EXPECT_FAIL(flashjit_merge_state(e, &va.t, &sa.t, &vb.t, &sb.t, NULL, &so.t, NULL),
                FLASHJIT_INVALID_ARGUMENT, "v_out");
    EXPECT_FAIL(flashjit_merge_state(e, &va.t, &vb.t, &vb.t, &sb.t, &vo.t, &so.t, NULL),
                FLASHJIT_INVALID_ARGUMENT, "s_a");
    EXPECT_FAIL(flashjit_merge_state_in_place(e, &va.t, &sa.t, &vb.t, &sb.t, &mask.t, NULL),
                FLASHJIT_INVALID_ARGUMENT, "mask: dtype i32");
    EXPECT_FAIL(flashjit_merge_states(e, &va.t, &sn.t, &vo.t, &so.t, NULL),
                FLASHJIT_INVALID_ARGUMENT, "v: expected 4");
  }
  /* layernorm */
  EXPECT_OK(flashjit_layernorm(e, &lx.t, &gamma.t, &beta.t, &lx.t, 1e-5f, NULL));
  EXPECT_FAIL(flashjit_layernorm(e, &lx.t, &gamma.t, &in.t, &lx.t, 1e-5f, NULL),
              FLASHJIT_INVALID_ARGUMENT, "");
  /* rope */
  EXPECT_OK(flashjit_apply_rope_pos_ids_inplace(e, &q.t, &k.t, &pos.t, NULL, NULL));
  EXPECT_OK(flashjit_apply_rope_pos_ids(e, &q.t, &k.t, &qr.t, &kr.t, &pos.t, NULL, NULL));
  EXPECT_OK(flashjit_apply_rope(e, &q.t, &k.t, &qr.t, &kr.t, &indptr.t, &offsets.t, NULL, NULL));
  EXPECT_OK(flashjit_apply_llama31_rope_pos_ids_inplace(e, &q.t, &k.t, &pos.t, NULL, NULL));
  flashjit_llama31_rope_options_init(&ro);
  CHECK(ro.rope_theta == 5e5f && ro.old_context_len == 8192);
  EXPECT_OK(flashjit_apply_llama31_rope_inplace(e, &q.t, &k.t, &indptr.t, &offsets.t, &ro, NULL));
  EXPECT_FAIL(flashjit_apply_rope_pos_ids_inplace(e, &q.t, &k.t, &pos_f.t, NULL, NULL),
              FLASHJIT_INVALID_ARGUMENT, "pos_ids");
  flashjit_rope_options_init(&ro);
  ro.rotary_dim = 129;
  EXPECT_FAIL(flashjit_apply_rope_pos_ids_inplace(e, &q.t, &k.t, &pos.t, &ro, NULL),
              FLASHJIT_INVALID_ARGUMENT, "rotary_dim");
  EXPECT_FAIL(flashjit_apply_rope_pos_ids(e, &q.t, &k.t, NULL, &kr.t, &pos.t, NULL, NULL),
              FLASHJIT_INVALID_ARGUMENT, "q_rope");
  EXPECT_FAIL(flashjit_apply_rope_pos_ids(e, &q.t, &k.t, &qr.t, &kr.t, NULL, NULL, NULL),
              FLASHJIT_INVALID_ARGUMENT, "pos_ids");
  EXPECT_FAIL(flashjit_apply_llama31_rope(e, &q.t, &k.t, &qr.t, &kr.t, &indptr.t, NULL, NULL, NULL),
              FLASHJIT_INVALID_ARGUMENT, "offsets");
}

static void TestPageAndSampling(flashjit_engine* e) {
  const int64_t kv_s[3] = {4, 8, 128}, n_s[1] = {4}, cache_s[4] = {16, 16, 8, 128}, idx_s[1] = {16},
                ip_s[1] = {5};
  const int64_t probs_s[2] = {4, 32000}, b_s[1] = {4};
  Tensor key = Make(kBF16, 3, kv_s), value = Make(kBF16, 3, kv_s);
  Tensor bi = Make(kI32, 1, n_s), pos = Make(kI32, 1, n_s), kc = Make(kBF16, 4, cache_s),
         vc = Make(kBF16, 4, cache_s), kv_indices = Make(kI32, 1, idx_s),
         kv_indptr = Make(kI32, 1, ip_s), last = Make(kI32, 1, n_s), kc16 = Make(kF16, 4, cache_s);
  Tensor probs = Make(kF32, 2, probs_s), samples = Make(kI32, 1, b_s),
         samples_f = Make(kF32, 1, b_s), renorm = Make(kF32, 2, probs_s);
  flashjit_sampling_args args;

  EXPECT_OK(flashjit_append_paged_kv_cache(e, &key.t, &value.t, &bi.t, &pos.t, &kc.t, &vc.t,
                                           &kv_indices.t, &kv_indptr.t, &last.t,
                                           FLASHJIT_KV_LAYOUT_NHD, 1.f, 1.f, NULL));
  EXPECT_FAIL(flashjit_append_paged_kv_cache(e, &key.t, &value.t, &bi.t, &pos.t, &kc16.t, &vc.t,
                                             &kv_indices.t, &kv_indptr.t, &last.t,
                                             FLASHJIT_KV_LAYOUT_NHD, 1.f, 1.f, NULL),
              FLASHJIT_INVALID_ARGUMENT, "");
  EXPECT_FAIL(flashjit_append_paged_kv_cache(e, &key.t, &value.t, &bi.t, &pos.t, &kc.t, &vc.t,
                                             &kv_indices.t, &kv_indptr.t, &last.t,
                                             (flashjit_kv_layout)7, 1.f, 1.f, NULL),
              FLASHJIT_INVALID_ARGUMENT, "layout");

  memset(&args, 0, sizeof(args));
  args.seed = 42;
  EXPECT_OK(flashjit_top_p_sampling_from_probs(e, &probs.t, &samples.t, 0.9f, NULL, &args, NULL));
  EXPECT_OK(flashjit_top_k_sampling_from_probs(e, &probs.t, &samples.t, 50, NULL, NULL, NULL));
  EXPECT_OK(flashjit_sampling_from_probs(e, &probs.t, &samples.t, NULL, NULL));
  EXPECT_OK(flashjit_top_k_top_p_sampling_from_probs(e, &probs.t, &samples.t, 50, NULL, 0.9f, NULL,
                                                     FLASHJIT_FILTER_TOP_K_FIRST, NULL, NULL));
  EXPECT_OK(flashjit_top_p_renorm_probs(e, &probs.t, &renorm.t, 0.9f, NULL, NULL));
  EXPECT_FAIL(flashjit_top_p_sampling_from_probs(e, &probs.t, &samples_f.t, 0.9f, NULL, NULL, NULL),
              FLASHJIT_INVALID_ARGUMENT, "samples");
  EXPECT_FAIL(flashjit_top_p_sampling_from_probs(e, &probs.t, &samples.t, 1.5f, NULL, NULL, NULL),
              FLASHJIT_INVALID_ARGUMENT, "top_p");
  EXPECT_FAIL(
      flashjit_top_k_top_p_sampling_from_probs(e, &probs.t, &samples.t, 50, NULL, 0.9f, NULL,
                                               (flashjit_filter_apply_order)5, NULL, NULL),
      FLASHJIT_INVALID_ARGUMENT, "order");
}

static void TestDecode(flashjit_engine* e) {
  const int64_t q_s[2] = {32, 128}, kv_s[3] = {100, 8, 128}, bq_s[3] = {3, 32, 128},
                cache_s[4] = {16, 16, 8, 128}, idx_s[1] = {16};
  Tensor q = Make(kBF16, 2, q_s), k = Make(kBF16, 3, kv_s), v = Make(kBF16, 3, kv_s),
         out = Make(kBF16, 2, q_s), kf = Make(kF32, 3, kv_s);
  Tensor bq = Make(kBF16, 3, bq_s), bout = Make(kBF16, 3, bq_s), kc = Make(kBF16, 4, cache_s),
         vc = Make(kBF16, 4, cache_s), kv_indices = Make(kI32, 1, idx_s);
  const int32_t indptr[4] = {0, 5, 9, 16}, last[3] = {16, 1, 7}, indices[16] = {0};
  flashjit_batch_decode_config cfg;
  flashjit_batch_decode* w = NULL;
  flashjit_decode_options opts;
  size_t ws = 0;
  void* workspace = (void*)(uintptr_t)0x7e0000000000ull;

  EXPECT_OK(flashjit_single_decode(e, &q.t, &k.t, &v.t, &out.t, NULL, FLASHJIT_KV_LAYOUT_NHD, NULL,
                                   NULL, 0, NULL));
  EXPECT_FAIL(flashjit_single_decode(e, &q.t, &kf.t, &v.t, &out.t, NULL, FLASHJIT_KV_LAYOUT_NHD,
                                     NULL, NULL, 0, NULL),
              FLASHJIT_INVALID_ARGUMENT, "");
  flashjit_decode_options_init(&opts);
  CHECK(opts.k_scale == 1.f && opts.window_left == -1);

  flashjit_batch_decode_config_init(&cfg);
  cfg.num_qo_heads = 32;
  cfg.num_kv_heads = 8;
  cfg.max_batch_size = 8;
  EXPECT_FAIL(flashjit_batch_decode_create(NULL, &cfg, &w), FLASHJIT_INVALID_HANDLE, "engine");
  EXPECT_FAIL(flashjit_batch_decode_create(e, NULL, &w), FLASHJIT_INVALID_ARGUMENT, "config");
  EXPECT_OK(flashjit_batch_decode_create(e, &cfg, &w));
  if (!w) return;
  EXPECT_OK(flashjit_batch_decode_workspace_bytes(w, &ws));
  CHECK(ws > 0);
  EXPECT_OK(
      flashjit_batch_decode_plan(w, indptr, last, 3, &opts, workspace, ws, indices, 16, NULL));
  EXPECT_OK(flashjit_batch_decode_run(w, &bq.t, &kc.t, &vc.t, &kv_indices.t, &bout.t, NULL, NULL));
  EXPECT_FAIL(flashjit_batch_decode_plan(w, NULL, last, 3, &opts, workspace, ws, NULL, 0, NULL),
              FLASHJIT_INVALID_ARGUMENT, "kv_indptr");
  EXPECT_FAIL(flashjit_batch_decode_run(w, &bq.t, &kc.t, &vc.t, &kv_indices.t, &q.t, NULL, NULL),
              FLASHJIT_INVALID_ARGUMENT, "");
  EXPECT_OK(flashjit_batch_decode_destroy(w));
  EXPECT_FAIL(flashjit_batch_decode_run(w, &bq.t, &kc.t, &vc.t, &kv_indices.t, &bout.t, NULL, NULL),
              FLASHJIT_INVALID_HANDLE, "not live");
  EXPECT_FAIL(flashjit_batch_decode_destroy(w), FLASHJIT_INVALID_HANDLE, "not live");
}

/* ---- packed calls (flashjit_call_packed) --------------------------------------------------- */

static void Pack(flashjit_packed_tensor* p, const Tensor* x) {
  int i;
  memset(p, 0, sizeof(*p));
  p->data = x->t.data;
  p->device_type = x->t.device.device_type;
  p->device_id = x->t.device.device_id;
  p->ndim = x->t.ndim;
  p->dtype = x->t.dtype;
  for (i = 0; i < x->t.ndim; ++i) {
    p->shape[i] = x->t.shape[i];
    p->strides[i] = x->t.strides ? x->t.strides[i] : 0;
  }
  if (!x->t.strides) { /* row-major */
    int64_t s = 1;
    for (i = x->t.ndim - 1; i >= 0; --i) {
      p->strides[i] = s;
      s *= x->t.shape[i];
    }
  }
}

static void TestPacked(flashjit_engine* e) {
  const int64_t xs[2] = {4, 4096}, ws[1] = {4096}, qs[3] = {4, 32, 128}, ks[3] = {4, 8, 128};
  const int64_t ps[1] = {4};
  Tensor x = Make(kBF16, 2, xs), w = Make(kBF16, 1, ws), out = Make(kBF16, 2, xs);
  Tensor q = Make(kBF16, 3, qs), k = Make(kBF16, 3, ks), pos = Make(kI32, 1, ps);
  flashjit_packed_call c;
  flashjit_rope_options ro;

  CHECK(sizeof(flashjit_packed_tensor) == 120);
  CHECK(strcmp(flashjit_packed_op_name(FLASHJIT_OP_RMSNORM), "rmsnorm") == 0);
  CHECK(flashjit_packed_op_num_tensors(FLASHJIT_OP_APPEND_PAGED_KV_CACHE) == 9);
  CHECK(flashjit_packed_op_name(999) == NULL && flashjit_packed_op_num_tensors(999) == -1);

  memset(&c, 0, sizeof(c));
  c.op = FLASHJIT_OP_RMSNORM;
  c.num_tensors = 3;
  c.handle = e;
  c.f[0] = 1e-6;
  Pack(&c.tensors[0], &x);
  Pack(&c.tensors[1], &w);
  Pack(&c.tensors[2], &out);
  EXPECT_OK(flashjit_call_packed(&c));
  /* The plain function's checks and messages. */
  c.f[0] = -1.0;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "eps");
  c.f[0] = 1e-6;
  c.tensors[0].dtype = kF64;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "input");
  Pack(&c.tensors[0], &x);
  c.tensors[0].strides[1] = 2; /* last dim not contiguous */
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "input");
  Pack(&c.tensors[0], &x);
  c.tensors[2].device_type = kDLCPU;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "out");
  Pack(&c.tensors[2], &out);
  /* An absent required tensor: the plain function's NULL message. */
  c.tensors[1].ndim = FLASHJIT_PACKED_ABSENT;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "weight");
  /* A DLTensor by reference. */
  c.tensors[1].ndim = FLASHJIT_PACKED_DLTENSOR;
  c.tensors[1].data = &w.t;
  EXPECT_OK(flashjit_call_packed(&c));
  Pack(&c.tensors[1], &w);
  /* The block's own checks. */
  EXPECT_FAIL(flashjit_call_packed(NULL), FLASHJIT_INVALID_ARGUMENT, "NULL");
  c.num_tensors = 2;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "rmsnorm: num_tensors = 2");
  c.num_tensors = 3;
  c.tensors[1].ndim = 7;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "tensor 1 (weight): ndim = 7");
  Pack(&c.tensors[1], &w);
  c.op = 999;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "op = 999");
  c.op = FLASHJIT_OP_RMSNORM;
  c.handle = NULL;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_HANDLE, "NULL");
  c.handle = e;

  /* Options by address (rope), and a scalar that does not fit its C type (layout). */
  memset(&c, 0, sizeof(c));
  c.op = FLASHJIT_OP_APPLY_LLAMA31_ROPE_POS_IDS_INPLACE;
  c.num_tensors = 3;
  c.handle = e;
  Pack(&c.tensors[0], &q);
  Pack(&c.tensors[1], &k);
  Pack(&c.tensors[2], &pos);
  EXPECT_OK(flashjit_call_packed(&c)); /* i[0] = 0: the defaults */
  flashjit_llama31_rope_options_init(&ro);
  ro.rotary_dim = 7;
  c.i[0] = (int64_t)(uintptr_t)&ro;
  EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "rotary_dim");
  {
    const int64_t kv[3] = {4, 8, 128}, cs[4] = {16, 16, 8, 128}, ix[1] = {16}, ip[1] = {5};
    Tensor ak = Make(kBF16, 3, kv), av = Make(kBF16, 3, kv), kc = Make(kBF16, 4, cs),
           vc = Make(kBF16, 4, cs), idx = Make(kI32, 1, ix), ptr = Make(kI32, 1, ip),
           last = Make(kI32, 1, ps), bi = Make(kI32, 1, ps);
    const Tensor* all[9];
    int j;
    all[0] = &ak, all[1] = &av, all[2] = &bi, all[3] = &pos, all[4] = &kc, all[5] = &vc;
    all[6] = &idx, all[7] = &ptr, all[8] = &last;
    memset(&c, 0, sizeof(c));
    c.op = FLASHJIT_OP_APPEND_PAGED_KV_CACHE;
    c.num_tensors = 9;
    c.handle = e;
    c.f[0] = c.f[1] = 1.0;
    for (j = 0; j < 9; ++j) Pack(&c.tensors[j], all[j]);
    EXPECT_OK(flashjit_call_packed(&c));
    c.i[0] = (int64_t)1 << 40;
    EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "i[0] (layout)");
    c.i[0] = 5;
    EXPECT_FAIL(flashjit_call_packed(&c), FLASHJIT_INVALID_ARGUMENT, "layout");
  }
}

/* ---- signed bundles with explicit trusted keys --------------------------------------------- */

static void TestTrustedKeys(const char* scratch) {
  char dir[4096], bundle[4096], priv[4096], pub[4096], other_priv[4096], other_pub[4096];
  char keys[8192], id[64], *buf;
  size_t needed = 0;
  int64_t added = -1;
  flashjit_engine_options o;
  flashjit_engine *e, *strict = NULL;
  const char* spec = "{\"op\": \"rmsnorm\", \"dtype\": \"bf16\"}";
  snprintf(dir, sizeof(dir), "%s/cache-signed", scratch);
  snprintf(bundle, sizeof(bundle), "%s/signed.fjbundle", scratch);
  snprintf(priv, sizeof(priv), "%s/ship.pem", scratch);
  snprintf(pub, sizeof(pub), "%s/ship.pub.pem", scratch);
  snprintf(other_priv, sizeof(other_priv), "%s/other.pem", scratch);
  snprintf(other_pub, sizeof(other_pub), "%s/other.pub.pem", scratch);
  remove(bundle), remove(priv), remove(pub), remove(other_priv), remove(other_pub);

  EXPECT_OK(flashjit_bundle_keygen(priv, pub, id, sizeof(id), &needed));
  CHECK(strlen(id) == 16 && needed == 17);
  CHECK(flashjit_bundle_keygen(priv, pub, NULL, 0, NULL) != FLASHJIT_OK); /* never overwrites */
  CHECK(Contains(flashjit_last_error(), "flashjit_bundle_keygen"));
  EXPECT_FAIL(flashjit_bundle_keygen(NULL, pub, NULL, 0, NULL), FLASHJIT_INVALID_ARGUMENT,
              "private_pem");
  EXPECT_OK(flashjit_bundle_keygen(other_priv, other_pub, NULL, 0, NULL));

  e = DryRunEngine(dir);
  if (!e) return;
  EXPECT_OK(flashjit_engine_build(e, spec, NULL, NULL, 0, NULL));
  EXPECT_OK(flashjit_bundle_export(e, "sm_90a", bundle, priv, NULL, 0, NULL));

  /* Trusted: verified. */
  EXPECT_OK(flashjit_bundle_inspect_trusted(bundle, pub, 1, NULL, 0, &needed));
  buf = (char*)malloc(needed);
  EXPECT_OK(flashjit_bundle_inspect_trusted(bundle, pub, 1, buf, needed, NULL));
  CHECK(Contains(buf, "\"ok\": true") && Contains(buf, "verified (key") && Contains(buf, id));
  free(buf);
  /* Signed by a key that is not trusted: refused, with the reason. */
  snprintf(keys, sizeof(keys), "%s", other_pub);
  EXPECT_OK(flashjit_bundle_inspect_trusted(bundle, keys, 0, NULL, 0, &needed));
  buf = (char*)malloc(needed);
  EXPECT_OK(flashjit_bundle_inspect_trusted(bundle, keys, 0, buf, needed, NULL));
  CHECK(Contains(buf, "\"ok\": false") && Contains(buf, "not among the trusted keys"));
  free(buf);
  /* Both keys (':'-list): verified again. */
  snprintf(keys, sizeof(keys), "%s:%s", other_pub, pub);
  buf = (char*)malloc(1 << 16);
  EXPECT_OK(flashjit_bundle_inspect_trusted(bundle, keys, 1, buf, 1 << 16, NULL));
  CHECK(Contains(buf, "\"ok\": true"));
  free(buf);
  /* An unreadable key file is an error, not a silent downgrade. */
  snprintf(keys, sizeof(keys), "%s/no-such-key.pem", scratch);
  CHECK(flashjit_bundle_inspect_trusted(bundle, keys, 0, NULL, 0, NULL) != FLASHJIT_OK);
  EXPECT_FAIL(flashjit_bundle_inspect_trusted(NULL, pub, 0, NULL, 0, NULL),
              FLASHJIT_INVALID_ARGUMENT, "path");

  /* An engine with the other key trusted and signatures required refuses the import. */
  flashjit_engine_options_init(&o);
  o.read_environment = 0;
  o.dry_run = 1;
  o.arch = "sm_90a";
  snprintf(dir, sizeof(dir), "%s/cache-signed-strict", scratch);
  o.cache_dir = dir;
  o.trusted_bundle_keys = other_pub;
  o.require_signed_bundles = 1;
  EXPECT_OK(flashjit_engine_create(&o, &strict));
  if (strict) {
    EXPECT_FAIL(flashjit_bundle_import(strict, bundle, "sm_90a", &added),
                FLASHJIT_PERMISSION_DENIED, "trusted");
    EXPECT_OK(flashjit_engine_destroy(strict));
  }
  o.trusted_bundle_keys = pub;
  EXPECT_OK(flashjit_engine_create(&o, &strict));
  if (strict) {
    EXPECT_OK(flashjit_bundle_import(strict, bundle, "sm_90a", &added));
    CHECK(added == 1);
    EXPECT_OK(flashjit_engine_destroy(strict));
  }
  EXPECT_OK(flashjit_engine_destroy(e));
}

int main(int argc, char** argv) {
  const char* scratch = argc > 1 ? argv[1] : ".";
  char dir[4096];
  flashjit_engine* e;

  TestBasics();
  TestEngineErrors(scratch);
  TestEngineAndCache(scratch);
  TestTrustedKeys(scratch);
  snprintf(dir, sizeof(dir), "%s/cache-ops", scratch);
  e = DryRunEngine(dir);
  if (e) {
    TestTensorValidation(e);
    TestLayerOps(e);
    TestPageAndSampling(e);
    TestDecode(e);
    TestPacked(e);
    EXPECT_OK(flashjit_engine_destroy(e));
  }
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
