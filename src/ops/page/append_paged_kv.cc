// AppendPagedKvCache and GetBatchIndicesPositions: validate, choose the variant, launch.
#include <flashjit/page.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "page/page_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/ops/common/pdl.h"
#include "src/ops/norm/resident_grid.h"
#include "src/ops/page/page_spec.h"

namespace flashjit {
namespace {

using namespace ops;

Status CheckI32(const TensorView& t, std::string_view name, int64_t size, std::string_view what,
                const TensorView& ref) {
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(t, name, 1, {DType::kI32}));
  if (size >= 0) FLASHJIT_RETURN_IF_ERROR(CheckDim(t, name, 0, size, what));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(t, name));
  return CheckSameDevice(t, name, ref, "append_key");
}

// Index of page_size / heads in a 4-D cache of `layout`.
int SlotDim(KvLayout l) { return l == KvLayout::kNHD ? 1 : 2; }
int HeadDim(KvLayout l) { return l == KvLayout::kNHD ? 2 : 1; }

// Per-item form (no longer the default): resolve every item's page before the first store, or
// chain index loads and stores item by item. Measured on the H200 (docs/perf/layer_ops.md):
// resolving first was 6-7 % faster for fp8 caches and within noise for 16-bit caches, so only fp8
// uses it. Benchmark knob: FLASHJIT_PAGE_RESOLVE=0/1 overrides.
uint8_t ResolveFirst(bool fp8) {
  static const int kOverride = [] {
    const char* v = std::getenv("FLASHJIT_PAGE_RESOLVE");
    return v && (v[0] == '0' || v[0] == '1') ? v[0] - '0' : -1;
  }();
  return static_cast<uint8_t>(kOverride >= 0 ? kOverride : fp8 ? 1 : 0);
}

// Benchmark knob: FLASHJIT_PAGE_KERNEL = "tokens:<threads>:<items>" (token-tile form),
// "loop:<threads>:<items>" (token-tile form over a resident grid) or "item:<threads>:<items>"
// (per-item form, resolve as FLASHJIT_PAGE_RESOLVE / the fp8 rule).
const AppendKvSpec* KernelOverride() {
  static const std::optional<AppendKvSpec> kOverride = []() -> std::optional<AppendKvSpec> {
    const char* v = std::getenv("FLASHJIT_PAGE_KERNEL");
    if (!v) return std::nullopt;
    AppendKvSpec s;
    int t = 0, i = 0;
    if (std::sscanf(v, "tokens:%d:%d", &t, &i) == 2) {
      s.tokens = 1;
    } else if (std::sscanf(v, "loop:%d:%d", &t, &i) == 2) {
      s.tokens = 1;
      s.loop = 1;
    } else if (std::sscanf(v, "item:%d:%d", &t, &i) == 2) {
      s.tokens = 0;
    } else {
      return std::nullopt;
    }
    if ((t != 64 && t != 128 && t != 256 && t != 512) || (i != 1 && i != 2 && i != 4))
      return std::nullopt;
    s.threads = static_cast<uint16_t>(t);
    s.items = static_cast<uint8_t>(i);
    return s;
  }();
  return kOverride ? &*kOverride : nullptr;
}

}  // namespace

namespace ops {

Status AppendPagedKvCacheWith(Engine& engine, const TensorView& key, const TensorView& value,
                              const TensorView& batch_indices, const TensorView& positions,
                              const TensorView& k_cache, const TensorView& v_cache,
                              const TensorView& kv_indices, const TensorView& kv_indptr,
                              const TensorView& kv_last_page_len, KvLayout layout, float k_scale,
                              float v_scale, void* stream, const AppendKvSpec* force,
                              int max_grid) {
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(key, "append_key", 3, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(key, "append_key"));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(value, "append_value", 3, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(value, "append_value", key, "append_key"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(value, "append_value", key, "append_key"));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(value, "append_value"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(value, "append_value", key, "append_key"));
  const int64_t nnz = key.shape[0], heads = key.shape[1], head_dim = key.shape[2];
  FLASHJIT_RETURN_IF_ERROR(CheckI32(batch_indices, "batch_indices", nnz, "nnz", key));
  FLASHJIT_RETURN_IF_ERROR(CheckI32(positions, "positions", nnz, "nnz", key));
  const auto cache_types = {DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF8E5M2};
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(k_cache, "k_cache", 4, cache_types));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(v_cache, "v_cache", 4, cache_types));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(v_cache, "v_cache", k_cache, "k_cache"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(v_cache, "v_cache", k_cache, "k_cache"));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(k_cache, "k_cache"));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(v_cache, "v_cache"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(k_cache, "k_cache", key, "append_key"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(v_cache, "v_cache", key, "append_key"));
  const bool fp8 = k_cache.dtype == DType::kF8E4M3 || k_cache.dtype == DType::kF8E5M2;
  if (!fp8) FLASHJIT_RETURN_IF_ERROR(CheckSameDType(k_cache, "k_cache", key, "append_key"));
  const std::string_view lname = layout == KvLayout::kNHD ? "NHD" : "HND";
  FLASHJIT_RETURN_IF_ERROR(CheckDim(k_cache, "k_cache", HeadDim(layout), heads,
                                    fmt::format("append_key's heads ({})", lname)));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(k_cache, "k_cache", 3, head_dim, "append_key's head_dim"));
  const int64_t page_size = k_cache.shape[SlotDim(layout)];
  FLASHJIT_RETURN_IF_ERROR(CheckI32(kv_indptr, "kv_indptr", -1, "", key));
  const int64_t batch = kv_indptr.shape[0] - 1;
  if (batch < 1)
    return Status::InvalidArgument(
        fmt::format("kv_indptr: needs batch + 1 >= 2 entries, got {}", kv_indptr.Describe()));
  FLASHJIT_RETURN_IF_ERROR(CheckI32(kv_indices, "kv_indices", -1, "", key));
  FLASHJIT_RETURN_IF_ERROR(
      CheckI32(kv_last_page_len, "kv_last_page_len", batch, "kv_indptr's batch size", key));
  FLASHJIT_RETURN_IF_ERROR(CheckPositive(k_scale, "k_scale"));
  FLASHJIT_RETURN_IF_ERROR(CheckPositive(v_scale, "v_scale"));
  if (!fp8 && (k_scale != 1.f || v_scale != 1.f))
    return Status::InvalidArgument(
        fmt::format("k_scale/v_scale: {} / {}; scales apply to fp8 caches only, must be 1 for {}",
                    k_scale, v_scale, DTypeName(k_cache.dtype)));
  if (nnz > 0x7fffffff || page_size == 0 || head_dim == 0)
    return Status::InvalidArgument(fmt::format("append_key: {} with page_size {} is not supported",
                                               key.Describe(), page_size));
  if (nnz == 0 || heads == 0) return Status::Ok();

  auto strides_of = [&](const TensorView& c) {
    return page::CacheLayout{c.strides[0], c.strides[SlotDim(layout)], c.strides[HeadDim(layout)]};
  };
  const page::CacheLayout kl = strides_of(k_cache), vl = strides_of(v_cache);
  int vec = VectorWidth(DTypeBytes(key.dtype), head_dim, {key.data, value.data},
                        {key.strides[0], key.strides[1], value.strides[0], value.strides[1]});
  // The cache side must take the same number of elements per access.
  const int cbytes = DTypeBytes(k_cache.dtype);
  for (; vec > 1; vec /= 2) {
    bool ok = true;
    for (const void* ptr : {k_cache.data, v_cache.data})
      ok = ok && reinterpret_cast<uintptr_t>(ptr) % (vec * cbytes) == 0;
    for (int64_t s : {kl.stride_page, kl.stride_slot, kl.stride_head, vl.stride_page,
                      vl.stride_slot, vl.stride_head})
      ok = ok && s % vec == 0;
    if (ok) break;
  }

  // Default (measured on the H200, docs/perf/layer_ops.md, 2026-11-29 s2 and s4): the token-tile
  // form; 128 threads x 2 items for 16-bit caches (all forms within 3 % there; the loop form is
  // 2 % slower: 72 registers, 7 blocks per SM instead of 12); for fp8 caches 256 x 2 over a
  // resident grid (loop form: 11-13 % faster than one tile per block in the s4 call; likely
  // because the fp8 conversions and stores of a tile now overlap the next tile's loads).
  AppendKvSpec spec;
  spec.threads = fp8 ? 256 : 128;
  spec.items = 2;
  spec.tokens = 1;
  spec.loop = fp8 ? 1 : 0;
  if (const AppendKvSpec* f = force ? force : KernelOverride()) {
    spec.threads = f->threads;
    spec.items = f->items;
    spec.tokens = f->tokens;
    spec.loop = f->loop;
  }
  spec.dtype = key.dtype;
  spec.cache_dtype = k_cache.dtype;
  spec.vec = static_cast<uint8_t>(vec);
  const int64_t per_token = heads * (head_dim / vec);
  const int64_t total = nnz * per_token;
  const int64_t per_block = int64_t{spec.threads} * spec.items;
  if (total + per_block >= 0x7fffffff)
    return Status::InvalidArgument(
        fmt::format("append_key: {} accesses of {} elements; at most 2^31 per launch", total, vec));
  // Token-tile form: head and element offset packed in 16 bits each (else the per-item form).
  if (heads >= 32768 || head_dim >= 65536) spec.tokens = spec.loop = 0;
  if (!spec.tokens) spec.loop = 0;
  const int64_t tile_tokens = std::min(nnz, per_block / per_token + 2);
  spec.resolve = spec.tokens ? 0 : ResolveFirst(fp8);
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, key.device));

  page::AppendKvParams p{};
  p.key = key.data;
  p.value = value.data;
  p.k_cache = k_cache.data;
  p.v_cache = v_cache.data;
  p.batch_indices = static_cast<const int32_t*>(batch_indices.data);
  p.positions = static_cast<const int32_t*>(positions.data);
  p.kv_indices = static_cast<const int32_t*>(kv_indices.data);
  p.kv_indptr = static_cast<const int32_t*>(kv_indptr.data);
  p.key_stride_token = key.strides[0];
  p.key_stride_head = key.strides[1];
  p.value_stride_token = value.strides[0];
  p.value_stride_head = value.strides[1];
  p.k_layout = kl;
  p.v_layout = vl;
  p.nnz = static_cast<int32_t>(nnz);
  p.num_heads = static_cast<int32_t>(heads);
  p.head_dim = static_cast<int32_t>(head_dim);
  p.page_size = static_cast<int32_t>(page_size);
  p.k_rcp_scale = 1.f / k_scale;
  p.v_rcp_scale = 1.f / v_scale;
  p.tile_tokens = static_cast<int32_t>(tile_tokens);
  runtime::LaunchConfig cfg;
  const int64_t tiles = (total + per_block - 1) / per_block;
  // Loop form: one wave of resident blocks, each taking every grid-th tile (two offset tables).
  cfg.grid_x = static_cast<uint32_t>(tiles);
  cfg.programmatic = LayerOpPdl(engine, key.device);
  if (spec.loop) {
    cfg.grid_x = ops::ResidentGrid(*kernel, 0, spec.threads, tiles);
    if (max_grid > 0) cfg.grid_x = std::min(cfg.grid_x, static_cast<uint32_t>(max_grid));
  }
  cfg.block_x = spec.threads;
  if (spec.tokens) cfg.dynamic_smem = static_cast<uint32_t>(tile_tokens * (spec.loop ? 32 : 16));
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace ops

Status AppendPagedKvCache(Engine& engine, const TensorView& key, const TensorView& value,
                          const TensorView& batch_indices, const TensorView& positions,
                          const TensorView& k_cache, const TensorView& v_cache,
                          const TensorView& kv_indices, const TensorView& kv_indptr,
                          const TensorView& kv_last_page_len, KvLayout layout, float k_scale,
                          float v_scale, void* stream) {
  return ops::AppendPagedKvCacheWith(engine, key, value, batch_indices, positions, k_cache, v_cache,
                                     kv_indices, kv_indptr, kv_last_page_len, layout, k_scale,
                                     v_scale, stream, nullptr);
}

Status AppendPagedKvCache(Engine& engine, const TensorView& key, const TensorView& value,
                          const TensorView& batch_indices, const TensorView& positions,
                          const TensorView& cache, const TensorView& kv_indices,
                          const TensorView& kv_indptr, const TensorView& kv_last_page_len,
                          KvLayout layout, float k_scale, float v_scale, void* stream) {
  if (cache.ndim != 5 || cache.shape[1] != 2)
    return Status::InvalidArgument(
        fmt::format("paged_kv_cache: expected [num_pages, 2, ...] with 5 dimensions, got {}",
                    cache.Describe()));
  TensorView k = cache;
  k.ndim = 4;
  k.shape[0] = cache.shape[0];
  k.strides[0] = cache.strides[0];
  for (int d = 1; d < 4; ++d) {
    k.shape[d] = cache.shape[d + 1];
    k.strides[d] = cache.strides[d + 1];
  }
  TensorView v = k;
  if (cache.data)
    v.data = static_cast<char*>(cache.data) + cache.strides[1] * DTypeBytes(cache.dtype);
  return AppendPagedKvCache(engine, key, value, batch_indices, positions, k, v, kv_indices,
                            kv_indptr, kv_last_page_len, layout, k_scale, v_scale, stream);
}

Status GetBatchIndicesPositions(Engine& engine, const TensorView& append_indptr,
                                const TensorView& seq_lens, const TensorView& batch_indices,
                                const TensorView& positions, void* stream) {
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(append_indptr, "append_indptr", 1, {DType::kI32}));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(append_indptr, "append_indptr"));
  const int64_t batch = append_indptr.shape[0] - 1;
  if (batch < 1)
    return Status::InvalidArgument(fmt::format(
        "append_indptr: needs batch + 1 >= 2 entries, got {}", append_indptr.Describe()));
  auto check = [&](const TensorView& t, std::string_view name, int64_t size,
                   std::string_view what) -> Status {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(t, name, 1, {DType::kI32}));
    if (size >= 0) FLASHJIT_RETURN_IF_ERROR(CheckDim(t, name, 0, size, what));
    FLASHJIT_RETURN_IF_ERROR(CheckContiguous(t, name));
    return CheckSameDevice(t, name, append_indptr, "append_indptr");
  };
  FLASHJIT_RETURN_IF_ERROR(check(seq_lens, "seq_lens", batch, "append_indptr's batch size"));
  FLASHJIT_RETURN_IF_ERROR(check(batch_indices, "batch_indices", -1, ""));
  FLASHJIT_RETURN_IF_ERROR(
      check(positions, "positions", batch_indices.shape[0], "batch_indices' length"));
  if (batch > 0x7fffffff)
    return Status::InvalidArgument(fmt::format("append_indptr: batch {} too large", batch));

  BatchPositionsSpec spec;
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel,
                            KernelFor(engine, spec, append_indptr.device));
  page::BatchPositionsParams p{};
  p.append_indptr = static_cast<const int32_t*>(append_indptr.data);
  p.seq_lens = static_cast<const int32_t*>(seq_lens.data);
  p.batch_indices = static_cast<int32_t*>(batch_indices.data);
  p.positions = static_cast<int32_t*>(positions.data);
  p.batch = batch;
  runtime::LaunchConfig cfg;
  cfg.grid_x = static_cast<uint32_t>(batch);
  cfg.programmatic = LayerOpPdl(engine, append_indptr.device);
  cfg.block_x = spec.threads;
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace flashjit
