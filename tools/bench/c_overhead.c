/* Host time of one C ABI call per op (median us, cache-hot), the baseline that
 * tools/bench/python_overhead.py compares the Python package against. Same ops and shapes as
 * that script: one decode step of a Llama-3.1-8B-shaped layer, batch 32.
 *
 * Usage: flashjit_c_overhead [--dry-run] [--iters N]
 *   On a GPU machine: allocates device memory through libcuda, launches on the NULL stream,
 *   synchronises every 32 calls outside the timed region. --dry-run (no GPU): a dry-run engine
 *   for sm_90a with fake pointers, measuring validation + kernel lookup only (thread CPU time
 *   over batches of 32 calls).
 * Prints one JSON object per line: {"op": ..., "median_us": ..., "p10_us": ..., "p90_us": ...}.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <flashjit/flashjit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
  B = 32,
  HIDDEN = 4096,
  INTER = 14336,
  HQ = 32,
  HKV = 8,
  D = 128,
  PAGE = 16,
  KV_LEN = 1024,
  VOCAB = 128256
};
enum { PAGES_PER_REQ = KV_LEN / PAGE, NUM_PAGES = B * PAGES_PER_REQ };

typedef int (*MemAllocFn)(unsigned long long*, size_t);
typedef int (*MemcpyHtoDFn)(unsigned long long, const void*, size_t);
typedef int (*MemsetFn)(unsigned long long, unsigned char, size_t);
typedef int (*CtxSyncFn)(void);
typedef int (*InitFn)(unsigned);
typedef int (*DeviceGetFn)(int*, int);
typedef int (*RetainFn)(void**, int);
typedef int (*SetCurrentFn)(void*);

static struct {
  MemAllocFn alloc;
  MemcpyHtoDFn htod;
  MemsetFn memset8;
  CtxSyncFn sync;
} cu;
static int g_dry = 0;
static unsigned long long g_fake = 0x7f0000000000ull;

static void Die(const char* what, flashjit_status st) {
  fprintf(stderr, "%s: %s: %s\n", what, flashjit_status_name(st), flashjit_last_error());
  exit(1);
}

static int InitCuda(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  InitFn init;
  DeviceGetFn device_get;
  RetainFn retain;
  SetCurrentFn set_current;
  int dev = 0;
  void* ctx = NULL;
  if (!lib) return 0;
  *(void**)&init = dlsym(lib, "cuInit");
  *(void**)&device_get = dlsym(lib, "cuDeviceGet");
  *(void**)&retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
  *(void**)&set_current = dlsym(lib, "cuCtxSetCurrent");
  *(void**)&cu.alloc = dlsym(lib, "cuMemAlloc_v2");
  *(void**)&cu.htod = dlsym(lib, "cuMemcpyHtoD_v2");
  *(void**)&cu.memset8 = dlsym(lib, "cuMemsetD8_v2");
  *(void**)&cu.sync = dlsym(lib, "cuCtxSynchronize");
  if (!init || init(0) != 0 || device_get(&dev, 0) != 0 || retain(&ctx, dev) != 0 ||
      set_current(ctx) != 0)
    return 0;
  return 1;
}

static void* Alloc(size_t bytes) {
  unsigned long long p = 0;
  if (g_dry) {
    p = g_fake;
    g_fake += (bytes + 0xfffffull) & ~0xfffffull;
    return (void*)(size_t)p;
  }
  if (cu.alloc(&p, bytes) != 0) {
    fprintf(stderr, "cuMemAlloc(%zu) failed\n", bytes);
    exit(1);
  }
  cu.memset8(p, 0, bytes);
  return (void*)(size_t)p;
}

static void Upload(void* dst, const void* src, size_t bytes) {
  if (!g_dry) cu.htod((unsigned long long)(size_t)dst, src, bytes);
}

typedef struct {
  DLTensor t;
  int64_t shape[4];
} Tensor;

static Tensor Make(void* data, DLDataType dtype, int ndim, int64_t d0, int64_t d1, int64_t d2,
                   int64_t d3) {
  Tensor x;
  memset(&x, 0, sizeof(x));
  x.shape[0] = d0;
  x.shape[1] = d1;
  x.shape[2] = d2;
  x.shape[3] = d3;
  x.t.data = data;
  x.t.device.device_type = kDLCUDA;
  x.t.ndim = ndim;
  x.t.dtype = dtype;
  x.t.shape = NULL; /* set by Fix() once the struct has its final address */
  return x;
}

static Tensor New(DLDataType dtype, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  int64_t n = d0 * (ndim > 1 ? d1 : 1) * (ndim > 2 ? d2 : 1) * (ndim > 3 ? d3 : 1);
  return Make(Alloc((size_t)n * dtype.bits / 8), dtype, ndim, d0, d1, d2, d3);
}

static double NowUs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int CmpDouble(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static const DLDataType kBF16 = {kDLBfloat, 16, 1};
static const DLDataType kF32 = {kDLFloat, 32, 1};
static const DLDataType kI32 = {kDLInt, 32, 1};

/* State shared by the op closures. */
static flashjit_engine* E;
static flashjit_batch_decode* W;
static Tensor x, res, w, out, act_in, act_out, q, k, pos, ak, av, bidx, apos, kc, vc, kv_idx,
    kv_ptr, kv_last, dq, dk, dv, dout, bq, bout, probs, samples;

static flashjit_status OpRmsnorm(void) {
  return flashjit_rmsnorm(E, &x.t, &w.t, &out.t, 1e-5f, NULL);
}
static flashjit_status OpFusedAdd(void) {
  return flashjit_fused_add_rmsnorm(E, &x.t, &res.t, &w.t, 1e-5f, NULL);
}
static flashjit_status OpSilu(void) {
  return flashjit_silu_and_mul(E, &act_in.t, &act_out.t, NULL);
}
static flashjit_status OpRope(void) {
  return flashjit_apply_llama31_rope_pos_ids_inplace(E, &q.t, &k.t, &pos.t, NULL, NULL);
}
static flashjit_status OpAppend(void) {
  return flashjit_append_paged_kv_cache(E, &ak.t, &av.t, &bidx.t, &apos.t, &kc.t, &vc.t, &kv_idx.t,
                                        &kv_ptr.t, &kv_last.t, FLASHJIT_KV_LAYOUT_NHD, 1.f, 1.f,
                                        NULL);
}
/* With a workspace, as the Python package calls it: the library may then split the request
 * over the SMs and merge (two launches), which it cannot do without one. */
static void* single_ws;
static size_t single_ws_bytes;
static flashjit_status OpSingleDecode(void) {
  return flashjit_single_decode(E, &dq.t, &dk.t, &dv.t, &dout.t, NULL, FLASHJIT_KV_LAYOUT_NHD, NULL,
                                single_ws, single_ws_bytes, NULL);
}
static flashjit_status OpBatchDecode(void) {
  return flashjit_batch_decode_run(W, &bq.t, &kc.t, &vc.t, &kv_idx.t, &bout.t, NULL, NULL);
}
static flashjit_status OpSampling(void) {
  flashjit_sampling_args a;
  memset(&a, 0, sizeof(a));
  a.seed = 1234;
  return flashjit_top_k_top_p_sampling_from_probs(E, &probs.t, &samples.t, 50, NULL, 0.9f, NULL,
                                                  FLASHJIT_FILTER_TOP_K_FIRST, &a, NULL);
}

/* The same calls through flashjit_call_packed (one block per op, filled once). */
static flashjit_packed_call g_pk_rmsnorm, g_pk_append;

static void Pack(flashjit_packed_tensor* p, const Tensor* x) {
  int i;
  int64_t s = 1;
  memset(p, 0, sizeof(*p));
  p->data = x->t.data;
  p->device_type = x->t.device.device_type;
  p->device_id = x->t.device.device_id;
  p->ndim = x->t.ndim;
  p->dtype = x->t.dtype;
  for (i = x->t.ndim - 1; i >= 0; --i) {
    p->shape[i] = x->shape[i];
    p->strides[i] = s;
    s *= x->shape[i];
  }
}

static void MakePacked(void) {
  const Tensor* append[9];
  int j;
  memset(&g_pk_rmsnorm, 0, sizeof(g_pk_rmsnorm));
  g_pk_rmsnorm.op = FLASHJIT_OP_RMSNORM;
  g_pk_rmsnorm.num_tensors = 3;
  g_pk_rmsnorm.handle = E;
  g_pk_rmsnorm.f[0] = 1e-5;
  Pack(&g_pk_rmsnorm.tensors[0], &x);
  Pack(&g_pk_rmsnorm.tensors[1], &w);
  Pack(&g_pk_rmsnorm.tensors[2], &out);
  append[0] = &ak, append[1] = &av, append[2] = &bidx, append[3] = &apos, append[4] = &kc;
  append[5] = &vc, append[6] = &kv_idx, append[7] = &kv_ptr, append[8] = &kv_last;
  memset(&g_pk_append, 0, sizeof(g_pk_append));
  g_pk_append.op = FLASHJIT_OP_APPEND_PAGED_KV_CACHE;
  g_pk_append.num_tensors = 9;
  g_pk_append.handle = E;
  g_pk_append.f[0] = g_pk_append.f[1] = 1.0;
  for (j = 0; j < 9; ++j) Pack(&g_pk_append.tensors[j], append[j]);
}

static flashjit_status OpRmsnormPacked(void) { return flashjit_call_packed(&g_pk_rmsnorm); }
static flashjit_status OpAppendPacked(void) { return flashjit_call_packed(&g_pk_append); }

/* Dry run: this thread's CPU time, per call, over batches of 32 calls (a busy build machine
 * then adds little). */
static double ThreadCpuUs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void TimeCpu(const char* name, flashjit_status (*op)(void), int iters) {
  int batches = iters / 32 > 0 ? iters / 32 : 1, i, j;
  double* t = (double*)malloc(sizeof(double) * (size_t)batches);
  for (i = 0; i < batches; ++i) {
    double t0 = ThreadCpuUs();
    for (j = 0; j < 32; ++j) op();
    t[i] = (ThreadCpuUs() - t0) / 32;
  }
  qsort(t, (size_t)batches, sizeof(double), CmpDouble);
  printf("{\"op\": \"%s\", \"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f}\n", name,
         t[batches / 2], t[batches / 10], t[batches * 9 / 10]);
  free(t);
}

static void Time(const char* name, flashjit_status (*op)(void), int iters) {
  double* t = (double*)malloc(sizeof(double) * (size_t)iters);
  int i;
  flashjit_status st;
  for (i = 0; i < 20; ++i)
    if ((st = op()) != FLASHJIT_OK) Die(name, st);
  if (g_dry) {
    free(t);
    TimeCpu(name, op, iters);
    return;
  }
  if (!g_dry) cu.sync();
  for (i = 0; i < iters; ++i) {
    double t0 = NowUs();
    op();
    t[i] = NowUs() - t0;
    if (!g_dry && i % 32 == 31) cu.sync();
  }
  if (!g_dry) cu.sync();
  qsort(t, (size_t)iters, sizeof(double), CmpDouble);
  printf("{\"op\": \"%s\", \"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f}\n", name,
         t[iters / 2], t[iters / 10], t[iters * 9 / 10]);
  free(t);
}

int main(int argc, char** argv) {
  int iters = 2000, i;
  flashjit_engine_options o;
  flashjit_batch_decode_config cfg;
  flashjit_status st;
  int32_t h_idx[NUM_PAGES], h_ptr[B + 1], h_last[B], h_b[B], h_pos[B];
  size_t ws_bytes = 0;
  void* ws;
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--dry-run") == 0) g_dry = 1;
    if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) iters = atoi(argv[++i]);
  }
  if (!g_dry && !InitCuda()) {
    fprintf(stderr, "no CUDA device: run with --dry-run\n");
    return 77;
  }
  flashjit_engine_options_init(&o);
  if (g_dry) {
    o.dry_run = 1;
    o.arch = "sm_90a";
  }
  if ((st = flashjit_engine_create(&o, &E)) != FLASHJIT_OK) Die("engine", st);

  x = New(kBF16, 2, B, HIDDEN, 0, 0);
  res = New(kBF16, 2, B, HIDDEN, 0, 0);
  out = New(kBF16, 2, B, HIDDEN, 0, 0);
  w = New(kBF16, 1, HIDDEN, 0, 0, 0);
  act_in = New(kBF16, 2, B, 2 * INTER, 0, 0);
  act_out = New(kBF16, 2, B, INTER, 0, 0);
  q = New(kBF16, 3, B, HQ, D, 0);
  k = New(kBF16, 3, B, HKV, D, 0);
  pos = New(kI32, 1, B, 0, 0, 0);
  ak = New(kBF16, 3, B, HKV, D, 0);
  av = New(kBF16, 3, B, HKV, D, 0);
  bidx = New(kI32, 1, B, 0, 0, 0);
  apos = New(kI32, 1, B, 0, 0, 0);
  kc = New(kBF16, 4, NUM_PAGES, PAGE, HKV, D);
  vc = New(kBF16, 4, NUM_PAGES, PAGE, HKV, D);
  kv_idx = New(kI32, 1, NUM_PAGES, 0, 0, 0);
  kv_ptr = New(kI32, 1, B + 1, 0, 0, 0);
  kv_last = New(kI32, 1, B, 0, 0, 0);
  dq = New(kBF16, 2, HQ, D, 0, 0);
  dout = New(kBF16, 2, HQ, D, 0, 0);
  dk = New(kBF16, 3, KV_LEN, HKV, D, 0);
  dv = New(kBF16, 3, KV_LEN, HKV, D, 0);
  bq = New(kBF16, 3, B, HQ, D, 0);
  bout = New(kBF16, 3, B, HQ, D, 0);
  probs = New(kF32, 2, B, VOCAB, 0, 0);
  samples = New(kI32, 1, B, 0, 0, 0);
  for (i = 0; i < NUM_PAGES; ++i) h_idx[i] = i;
  for (i = 0; i <= B; ++i) h_ptr[i] = i * PAGES_PER_REQ;
  for (i = 0; i < B; ++i) {
    h_last[i] = PAGE;
    h_b[i] = i;
    h_pos[i] = KV_LEN - 1;
  }
  {
    Tensor* all[] = {&x,  &res, &w,    &out,  &act_in, &act_out, &q,      &k,      &pos,
                     &ak, &av,  &bidx, &apos, &kc,     &vc,      &kv_idx, &kv_ptr, &kv_last,
                     &dq, &dk,  &dv,   &dout, &bq,     &bout,    &probs,  &samples};
    size_t j;
    for (j = 0; j < sizeof(all) / sizeof(all[0]); ++j) all[j]->t.shape = all[j]->shape;
  }
  Upload(kv_idx.t.data, h_idx, sizeof(h_idx));
  Upload(kv_ptr.t.data, h_ptr, sizeof(h_ptr));
  Upload(kv_last.t.data, h_last, sizeof(h_last));
  Upload(bidx.t.data, h_b, sizeof(h_b));
  Upload(apos.t.data, h_pos, sizeof(h_pos));
  Upload(pos.t.data, h_pos, sizeof(h_pos));

  flashjit_batch_decode_config_init(&cfg);
  cfg.num_qo_heads = HQ;
  cfg.num_kv_heads = HKV;
  cfg.head_dim = D;
  cfg.page_size = PAGE;
  cfg.max_batch_size = B;
  if ((st = flashjit_batch_decode_create(E, &cfg, &W)) != FLASHJIT_OK) Die("decode create", st);
  if ((st = flashjit_batch_decode_workspace_bytes(W, &ws_bytes)) != FLASHJIT_OK) Die("ws", st);
  ws = Alloc(ws_bytes);
  single_ws_bytes = flashjit_single_decode_workspace_bytes(HQ, D);
  single_ws = Alloc(single_ws_bytes);
  if ((st = flashjit_batch_decode_plan(W, h_ptr, h_last, B, NULL, ws, ws_bytes, NULL, 0, NULL)) !=
      FLASHJIT_OK)
    Die("plan", st);

  Time("rmsnorm", OpRmsnorm, iters);
  Time("fused_add_rmsnorm", OpFusedAdd, iters);
  Time("silu_and_mul", OpSilu, iters);
  Time("apply_llama31_rope_pos_ids_inplace", OpRope, iters);
  Time("append_paged_kv_cache", OpAppend, iters);
  Time("single_decode_with_kv_cache", OpSingleDecode, iters);
  Time("batch_decode_run", OpBatchDecode, iters);
  Time("top_k_top_p_sampling_from_probs", OpSampling, iters);
  MakePacked();
  Time("rmsnorm (C packed)", OpRmsnormPacked, iters);
  Time("append_paged_kv_cache (C packed)", OpAppendPacked, iters);
  flashjit_batch_decode_destroy(W);
  flashjit_engine_destroy(E);
  return 0;
}
