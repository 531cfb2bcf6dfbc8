// RunRope: checks, variant choice and launch shared by every RoPE entry point.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "rope/rope_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/ops/common/pdl.h"
#include "src/ops/norm/resident_grid.h"
#include "src/ops/rope/rope_spec.h"

namespace flashjit::ops {
namespace {

constexpr std::initializer_list<DType> kActivation = {DType::kF16, DType::kBF16};

Status CheckHeads(const TensorView& t, std::string_view name, const TensorView& like,
                  std::string_view like_name) {
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(t, name, 3, kActivation));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(t, name, like, like_name));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(t, name));
  return CheckSameDevice(t, name, like, like_name);
}

Status CheckIndex(const TensorView& t, std::string_view name, int64_t size, std::string_view what,
                  const TensorView& q, bool allow_i64) {
  FLASHJIT_RETURN_IF_ERROR(allow_i64 ? CheckTensor(t, name, 1, {DType::kI32, DType::kI64})
                                     : CheckTensor(t, name, 1, {DType::kI32}));
  if (size >= 0) FLASHJIT_RETURN_IF_ERROR(CheckDim(t, name, 0, size, what));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(t, name));
  return CheckSameDevice(t, name, q, "q");
}

Status CheckFinitePositive(float x, std::string_view name) { return CheckPositive(x, name); }

rope::HeadLayout Layout(const TensorView& t) { return {t.strides[0], t.strides[1]}; }

// Benchmark / test knob: FLASHJIT_ROPE_KERNEL = "warp" (the warp-per-token kernel),
// "tile:<warps>:<items>" or "row:<warps>:<items>:<slots>[:<full grid 0/1>[:<min blocks>]]"
// (slots 0: the chooser's; min blocks: the launch bound, 1 by default); unset or unparsable: the
// chooser's pick.
const RopeSpec* KernelOverride() {
  static const std::optional<RopeSpec> kOverride = []() -> std::optional<RopeSpec> {
    const char* v = std::getenv("FLASHJIT_ROPE_KERNEL");
    if (!v) return std::nullopt;
    RopeSpec s;
    int w = 0, i = 0, sl = 0;
    auto ok = [&] { return (w == 1 || w == 2 || w == 4 || w == 8) && i >= 1 && i <= 8 && i != 7; };
    if (std::strcmp(v, "warp") == 0) {
      s.kernel = 0;
      return s;
    }
    if (std::sscanf(v, "tile:%d:%d", &w, &i) == 2 && ok()) {
      s.kernel = 1;
    } else if (int g = 0, mb = 1, n = std::sscanf(v, "row:%d:%d:%d:%d:%d", &w, &i, &sl, &g, &mb);
               n >= 3 && ok() && sl >= 0 && sl <= 64 && mb >= 1 && mb <= 16) {
      s.kernel = 2;
      s.slots = static_cast<uint8_t>(sl);
      s.full_grid = n >= 4 && g == 1;
      s.minb = static_cast<uint8_t>(mb);
    } else {
      return std::nullopt;
    }
    s.warps = static_cast<uint8_t>(w);
    s.items = static_cast<uint8_t>(i);
    return s;
  }();
  return kOverride ? &*kOverride : nullptr;
}

constexpr int64_t kTileSmemBytes = 32 * 1024;

// Tokens per tile of the tile kernel: as many whole tokens as warps * 32 * items work items hold,
// capped by the shared cos / sin tables; 0 (use the warp kernel) when one token's work items or
// tables do not fit.
int64_t TileTokens(int warps, int items, int64_t per_token, int64_t angle_ld) {
  const int64_t by_items = int64_t{32} * warps * items / per_token;
  const int64_t by_smem = kTileSmemBytes / (8 * angle_ld + 8);
  return std::min(by_items, by_smem);
}

}  // namespace

Status RunRope(Engine& engine, const RopeArgs& a, void* stream, const RopeSpec* force) {
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(a.q, "q", 3, kActivation));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(a.q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckHeads(a.k, "k", a.q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckHeads(a.q_out, "q_out", a.q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckHeads(a.k_out, "k_out", a.q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(a.q_out, "q_out", a.q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(a.k_out, "k_out", a.k, "k"));
  const int64_t nnz = a.q.shape[0], head_dim = a.q.shape[2];
  FLASHJIT_RETURN_IF_ERROR(CheckDim(a.k, "k", 0, nnz, "q's token count"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(a.k, "k", 2, head_dim, "q's head_dim"));
  const int64_t rotary_dim = a.rotary_dim < 0 ? head_dim : a.rotary_dim;
  if (rotary_dim == 0 || rotary_dim % 2 != 0 || rotary_dim > head_dim)
    return Status::InvalidArgument(
        fmt::format("rotary_dim: {} must be even, > 0 and <= head_dim {}", rotary_dim, head_dim));
  if (nnz > 0x7fffffff || a.q.shape[1] + a.k.shape[1] > 0x7fffffff || head_dim > 0x7fffffff)
    return Status::InvalidArgument(
        fmt::format("q: {} tokens / heads exceed the int32 range", a.q.Describe()));

  int64_t batch = 0, max_pos = 0;
  DType pos_dtype = DType::kI32;
  if (a.mode == RopeMode::kIndptr) {
    FLASHJIT_RETURN_IF_ERROR(CheckIndex(a.indptr, "indptr", -1, "", a.q, false));
    batch = a.indptr.shape[0] - 1;
    if (batch < 1)
      return Status::InvalidArgument(
          fmt::format("indptr: needs batch_size + 1 >= 2 entries, got {}", a.indptr.Describe()));
    FLASHJIT_RETURN_IF_ERROR(
        CheckIndex(a.offsets, "offsets", batch, "indptr's batch size", a.q, false));
  } else {
    FLASHJIT_RETURN_IF_ERROR(CheckIndex(a.pos, "positions", nnz, "q's token count", a.q, true));
    pos_dtype = a.pos.dtype;
  }
  if (a.mode == RopeMode::kCache) {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(a.cache, "cos_sin_cache", 2, {DType::kF32}));
    FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(a.cache, "cos_sin_cache"));
    FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(a.cache, "cos_sin_cache", a.q, "q"));
    max_pos = a.cache.shape[0];
    if (a.max_position >= max_pos)
      return Status::InvalidArgument(fmt::format(
          "positions: max position {} is beyond cos_sin_cache's {} rows", a.max_position, max_pos));
  } else {
    FLASHJIT_RETURN_IF_ERROR(CheckFinitePositive(a.rope_theta, "rope_theta"));
    FLASHJIT_RETURN_IF_ERROR(CheckFinitePositive(a.rope_scale, "rope_scale"));
  }
  if (a.llama31) {
    FLASHJIT_RETURN_IF_ERROR(CheckFinitePositive(a.low_freq_factor, "low_freq_factor"));
    if (!(a.high_freq_factor > a.low_freq_factor) || !std::isfinite(a.high_freq_factor))
      return Status::InvalidArgument(
          fmt::format("high_freq_factor: {} must be finite and > low_freq_factor {}",
                      a.high_freq_factor, a.low_freq_factor));
    if (a.old_context_len <= 0)
      return Status::InvalidArgument(
          fmt::format("old_context_len: {} must be > 0", a.old_context_len));
  }
  if (nnz == 0) return Status::Ok();

  // Every access of `vec` elements must stay aligned: halves (NeoX) or pairs (interleaved),
  // the pass-through tail, and every token and head stride.
  const int64_t inner = a.interleave ? rotary_dim : rotary_dim / 2;
  const int vec =
      VectorWidth(DTypeBytes(a.q.dtype), inner, {a.q.data, a.k.data, a.q_out.data, a.k_out.data},
                  {head_dim, a.q.strides[0], a.q.strides[1], a.k.strides[0], a.k.strides[1],
                   a.q_out.strides[0], a.q_out.strides[1], a.k_out.strides[0], a.k_out.strides[1]});
  if (a.interleave && vec < 2)
    return Status::InvalidArgument(fmt::format(
        "q: interleaved RoPE needs pointers, strides and head_dim aligned to 2 elements ({})",
        a.q.Describe()));

  // Tile kernel: work items per token (rotation chunks + pass-through chunks, every head).
  const int64_t chunks =
      (a.interleave ? rotary_dim : rotary_dim / 2) / vec + (head_dim - rotary_dim) / vec;
  const int64_t per_token = (a.q.shape[1] + a.k.shape[1]) * chunks;
  const int64_t angle_ld = (rotary_dim / 2 + 3) / 4 * 4;
  const int64_t heads = a.q.shape[1] + a.k.shape[1];
  // Default (measured on the H200, docs/perf/layer_ops.md, session 3): the row kernel, 4 warps,
  // 8 slots (5 heads per thread at 32/8 heads), one block per token group (full grid); two heads
  // in flight per thread for NeoX (72 registers), four for interleaved (56). Of the swept forms
  // this was the fastest at 16k and at 64 tokens: full grid over a resident grid 3-5 %, 8 slots
  // over 4 about 2 %.
  RopeSpec spec;
  spec.kernel = 2;
  spec.warps = 4;
  spec.items = a.interleave ? 4 : 2;
  spec.slots = 8;
  spec.full_grid = 1;
  const RopeSpec* forced = force ? force : KernelOverride();
  if (const RopeSpec* f = forced) {
    spec.kernel = f->kernel;
    spec.warps = f->warps;
    spec.items = f->items;
    spec.slots = f->slots;
    spec.full_grid = f->full_grid;
    spec.minb = f->minb;
  }
  const bool full_grid = spec.full_grid != 0;
  // Slots (threads splitting a token's heads), capped by the heads and by the threads of a block;
  // a forced spec with slots 0 gets the session-2 rule: the fewest (most heads, so most angle
  // reuse, per thread) that give about 2^19 threads, as far as a block allows.
  int64_t tile_tokens = 0, slots = 0;
  // Row kernel: the turns of every frequency in shared memory, two floats each (not in cache
  // mode).
  const int64_t row_smem = a.mode == RopeMode::kCache ? 0 : rotary_dim / 2 * 8;
  if (spec.kernel == 2 && row_smem > kTileSmemBytes) spec.kernel = 0;
  if (spec.kernel == 2) {
    const int64_t threads = int64_t{32} * spec.warps, max_slots = std::min(heads, threads / chunks);
    if (max_slots < 1) {
      spec.kernel = 0;  // a head row wider than a block: the warp kernel
    } else if (spec.slots > 0) {
      slots = std::min<int64_t>(spec.slots, max_slots);
      // The chooser's slots (not a forced spec's), where the rule of 8 leaves threads idle or
      // too few threads (docs/perf/layer_ops.md, "Session 13"):
      // - a token's threads (chunks * slots) that fill under 90 % of the block: as many slots as
      //   fit. Partial rotary NeoX, head 128 with rotary 64, has 4 rotation + 8 pass-through
      //   chunks: 8 slots took 96 of 128 threads (one token per block) and ran at 3.46 TB/s
      //   queued at 16k tokens against 3.88 for the same shape interleaved (16 chunks, all
      //   128 threads); 10 slots take 120.
      // - fewer than 2^15 threads in all (small batches, latency-bound): as many slots as fit,
      //   so that each thread walks fewer heads one after another (64/8 heads at 1 token: 9
      //   heads per thread in five rounds of two, 6.1 us queued against 5.0 for 28/4 heads).
      if (!forced) {
        const int64_t per_block = threads / (chunks * slots) * chunks * slots;
        if (per_block * 10 < threads * 9 || nnz * chunks * slots < (int64_t{1} << 15))
          slots = max_slots;
      }
    } else {
      slots = 1;
      while (slots * 2 <= max_slots && nnz * chunks * slots < (int64_t{1} << 19)) slots *= 2;
    }
  }
  spec.slots = 0;  // launch parameters, not part of the variant
  spec.full_grid = 0;
  if (spec.kernel == 1) tile_tokens = TileTokens(spec.warps, spec.items, per_token, angle_ld);
  if (spec.kernel == 1 && tile_tokens < 1) spec.kernel = 0;
  if (spec.kernel == 0) {
    spec.warps = 4;
    spec.items = 4;  // unused by the warp kernel: one cache entry
    spec.minb = 1;
  }
  spec.dtype = a.q.dtype;
  spec.pos_dtype = pos_dtype;
  spec.mode = a.mode;
  spec.interleave = a.interleave;
  spec.vec = static_cast<uint8_t>(vec);
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, a.q.device));

  rope::RopeParams p{};
  p.q = a.q.data;
  p.k = a.k.data;
  p.q_out = a.q_out.data;
  p.k_out = a.k_out.data;
  p.pos = a.mode == RopeMode::kIndptr ? nullptr : a.pos.data;
  p.indptr = a.mode == RopeMode::kIndptr ? static_cast<const int32_t*>(a.indptr.data) : nullptr;
  p.offsets = a.mode == RopeMode::kIndptr ? static_cast<const int32_t*>(a.offsets.data) : nullptr;
  p.cos_sin_cache = a.mode == RopeMode::kCache ? static_cast<const float*>(a.cache.data) : nullptr;
  p.q_layout = Layout(a.q);
  p.k_layout = Layout(a.k);
  p.q_out_layout = Layout(a.q_out);
  p.k_out_layout = Layout(a.k_out);
  p.cache_stride = a.mode == RopeMode::kCache ? a.cache.strides[0] : 0;
  p.max_pos = max_pos;
  p.nnz = static_cast<int32_t>(nnz);
  p.batch = static_cast<int32_t>(batch);
  p.num_q_heads = static_cast<int32_t>(a.q.shape[1]);
  p.num_k_heads = static_cast<int32_t>(a.k.shape[1]);
  p.head_dim = static_cast<int32_t>(head_dim);
  p.rotary_dim = static_cast<int32_t>(rotary_dim);
  p.rcp_scale = 1.0 / a.rope_scale;
  p.log2_theta = std::log2(static_cast<double>(a.rope_theta));
  if (a.llama31) {
    // smooth = (old_context_len / wavelen - low) / (high - low), wavelen = 2 pi / freq.
    const double two_pi = 2.0 * M_PI;
    const double low = a.low_freq_factor, high = a.high_freq_factor;
    p.smooth_a = static_cast<double>(a.old_context_len) / (two_pi * (high - low));
    p.smooth_b = -low / (high - low);
  }
  p.tile_tokens = static_cast<int32_t>(tile_tokens);
  p.angle_ld = static_cast<int32_t>(angle_ld);
  p.row_chunks = static_cast<int32_t>(chunks);
  p.head_slots = static_cast<int32_t>(slots);
  runtime::LaunchConfig cfg;
  cfg.block_x = 32u * spec.warps;
  cfg.programmatic = LayerOpPdl(engine, a.q.device);
  if (spec.kernel == 2) {
    const int64_t tokens_per_block = cfg.block_x / (chunks * slots);
    const int64_t blocks = (nnz + tokens_per_block - 1) / tokens_per_block;
    cfg.dynamic_smem = static_cast<uint32_t>(row_smem);
    cfg.grid_x = full_grid ? static_cast<uint32_t>(std::min<int64_t>(blocks, 0x7fffffff))
                           : ResidentGrid(*kernel, 0, static_cast<int>(cfg.block_x), blocks,
                                          static_cast<int>(row_smem));
  } else if (spec.kernel == 1) {
    cfg.grid_x = static_cast<uint32_t>((nnz + tile_tokens - 1) / tile_tokens);
    cfg.dynamic_smem = static_cast<uint32_t>(tile_tokens * (8 * angle_ld + 8));
  } else {
    cfg.grid_x = ResidentGrid(*kernel, 0, static_cast<int>(cfg.block_x),
                              (nnz + spec.warps - 1) / spec.warps);
  }
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace flashjit::ops
