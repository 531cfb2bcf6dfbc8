#include "src/ops/decode/decode_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "src/ops/common/pdl.h"
#include "src/runtime/driver.h"
#include "src/runtime/occupancy.h"

namespace flashjit::ops {

Status CheckDecodeDTypes(DType q_dtype, DType kv_dtype, int64_t head_dim) {
  if (q_dtype != DType::kF16 && q_dtype != DType::kBF16)
    return Status::InvalidArgument(
        fmt::format("q: dtype {} not supported; allowed: f16, bf16", DTypeName(q_dtype)));
  const bool fp8 = kv_dtype == DType::kF8E4M3 || kv_dtype == DType::kF8E5M2;
  if (kv_dtype != q_dtype && !fp8)
    return Status::InvalidArgument(
        fmt::format("kv: dtype {} with q dtype {}; allowed: q's dtype, e4m3, e5m2",
                    DTypeName(kv_dtype), DTypeName(q_dtype)));
  if (head_dim != 64 && head_dim != 128 && head_dim != 256)
    return Status::InvalidArgument(
        fmt::format("head_dim: {} not supported; allowed: 64, 128, 256", head_dim));
  return Status::Ok();
}

Status CheckDecodeOptions(const DecodeOptions& o, int64_t num_qo_heads, int device) {
  auto finite_positive = [](float x) { return std::isfinite(x) && x > 0.f; };
  if (!(std::isfinite(o.sm_scale) && o.sm_scale >= 0.f))
    return Status::InvalidArgument(
        fmt::format("sm_scale: {} must be finite and >= 0 (0: 1/sqrt(head_dim))", o.sm_scale));
  if (!(std::isfinite(o.logits_soft_cap) && o.logits_soft_cap >= 0.f))
    return Status::InvalidArgument(
        fmt::format("logits_soft_cap: {} must be finite and >= 0 (0: off)", o.logits_soft_cap));
  if (o.window_left < -1)
    return Status::InvalidArgument(
        fmt::format("window_left: {} must be >= 0, or -1 (no window)", o.window_left));
  if (!finite_positive(o.k_scale) || !finite_positive(o.v_scale))
    return Status::InvalidArgument(
        fmt::format("k_scale / v_scale: {} / {} must be finite and > 0", o.k_scale, o.v_scale));
  if (o.rope &&
      (!finite_positive(o.rope_scale) || !(std::isfinite(o.rope_theta) && o.rope_theta > 1.f)))
    return Status::InvalidArgument(
        fmt::format("rope_scale / rope_theta: {} / {}; need rope_scale > 0 and rope_theta > 1",
                    o.rope_scale, o.rope_theta));
  if (Present(o.sinks)) {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(o.sinks, "sinks", 1, {DType::kF32}));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(o.sinks, "sinks", 0, num_qo_heads, "num_qo_heads"));
    FLASHJIT_RETURN_IF_ERROR(CheckContiguous(o.sinks, "sinks"));
    if (o.sinks.device != device)
      return Status::InvalidArgument(
          fmt::format("sinks: on cuda:{}, but q is on cuda:{}", o.sinks.device, device));
  }
  return Status::Ok();
}

Status CheckKVAlignment(const TensorView& t, const char* name) {
  const int64_t elems16 = 16 / DTypeBytes(t.dtype);
  if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
    return Status::InvalidArgument(fmt::format("{}: data must be 16-byte aligned", name));
  for (int d = 0; d + 1 < t.ndim; ++d) {
    if (t.shape[d] > 1 && t.strides[d] % elems16 != 0)
      return Status::InvalidArgument(
          fmt::format("{}: stride {} of dim {} is not a multiple of {} elements (16 bytes) ({})",
                      name, t.strides[d], d, elems16, t.Describe()));
  }
  return CheckInnerContiguous(t, name);
}

Status CheckKVStrides(const TensorView& t, const char* name) {
  constexpr int64_t kLimit = int64_t{1} << 32;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] <= 1) continue;
    if (t.strides[d] < 0 || t.strides[d] >= kLimit / DTypeBytes(t.dtype))
      return Status::InvalidArgument(
          fmt::format("{}: stride {} of dim {} must be >= 0 and under 2^32 bytes ({})", name,
                      t.strides[d], d, t.Describe()));
  }
  return Status::Ok();
}

Status CheckLse(const TensorView& lse, std::initializer_list<int64_t> shape, int device) {
  if (!Present(lse)) return Status::Ok();
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(lse, "lse", static_cast<int>(shape.size()), {DType::kF32}));
  int d = 0;
  for (int64_t s : shape) FLASHJIT_RETURN_IF_ERROR(CheckDim(lse, "lse", d++, s, "q's heads"));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(lse, "lse"));
  if (lse.device != device)
    return Status::InvalidArgument(
        fmt::format("lse: on cuda:{}, but q is on cuda:{}", lse.device, device));
  return Status::Ok();
}

DecodeSpec DecodeSpecFor(DType q_dtype, DType kv_dtype, int head_dim, const DecodeOptions& o) {
  return ChooseDecode(q_dtype, kv_dtype, head_dim, o.logits_soft_cap > 0.f, o.alibi, o.rope);
}

void FillOptionParams(const DecodeOptions& o, int head_dim, attention::DecodeParams* p) {
  const float sm_scale =
      (o.sm_scale > 0.f ? o.sm_scale : 1.f / std::sqrt(float(head_dim))) * o.k_scale;
  const bool transformed = o.logits_soft_cap > 0.f || o.alibi;
  p->sm_scale = sm_scale;
  p->score_scale = transformed ? 1.f : sm_scale * 1.4426950408889634f;
  p->soft_cap = o.logits_soft_cap > 0.f ? o.logits_soft_cap : 1.f;
  p->v_scale = o.v_scale;
  p->rope_rcp_scale = 1.f / o.rope_scale;
  p->rope_log2_theta = std::log2(o.rope_theta);
  p->window_left = o.window_left;
  p->sinks = static_cast<const float*>(o.sinks.data);
}

namespace {

// A tuning knob: the mode of the first choice whose text the environment variable `name` equals;
// `fallback` when it is unset or equals none of them.
int EnvMode(const char* name, std::initializer_list<std::pair<const char*, int>> choices,
            int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr) return fallback;
  for (const auto& [text, mode] : choices)
    if (std::strcmp(v, text) == 0) return mode;
  return fallback;
}

}  // namespace

int DecodePlanModel() {
  static const int kModel = EnvMode(
      "FLASHJIT_DECODE_PLAN_MODEL",
      {{"s12", kPlanModelS12}, {"s13", kPlanModelS13}, {"s18a", kPlanModelS18A}}, kPlanModelS18);
  return kModel;
}

int DecodeKernelRegisters(int head_dim, int kv_bytes, bool persistent, bool rope) {
  // NVRTC 13.0 for sm_90a (session 24; RoPE's rows since session 25, fp8 keys turned in
  // registers since session 26), the most over soft cap, ALiBi, fast index and, where `rope`,
  // RoPE. The attention entry: 16-bit KV 95-96 at D 64 (124 with RoPE and the other knobs),
  // 162-166 at D 128, 214-225 at D 256; fp8 96 at D 64, 160-164 at D 128, 255 at D 256 (up to
  // 60 bytes of spills), with RoPE 128 at D 64 and 228-232 at D 128 (the keys' angles and
  // words). The persistent entry (16-bit KV only): 162-167 at D 64, 218-242 at D 128, 250-255 at
  // D 256 (RoPE spills). At D 64 the extra registers of 16-bit RoPE cost no CTA: shared memory
  // holds 4 an SM either way. Session 30's compiled-in page sizes (FixedPageTileLoader) take up
  // to 2 more at D 64-128 (16-bit 168 at D 128, fp8 166, 234 with RoPE; the persistent entry 168
  // at D 64) and up to 248 at 16-bit D 256; none changes a count of CTAs an SM.
  if (persistent) return head_dim == 64 ? 168 : head_dim == 128 ? 242 : 255;
  if (kv_bytes == 2) return head_dim == 64 ? 124 : head_dim == 128 ? 168 : 248;
  if (rope) return head_dim == 64 ? 128 : head_dim == 128 ? 234 : 255;
  return head_dim == 64 ? 124 : head_dim == 128 ? 166 : 255;
}

namespace {
int ResidentDecodeCtas(int head_dim, int kv_bytes, bool persistent, bool rope) {
  const int smem =
      attention::DecodeSmemBytes(head_dim, kv_bytes, DecodeStages(head_dim, kv_bytes), rope);
  return runtime::ResidentBlocksPerSm(DecodeKernelRegisters(head_dim, kv_bytes, persistent, rope),
                                      attention::kDecodeThreads, smem);
}
}  // namespace

int DecodeCtasPerSm(int head_dim, int kv_bytes, bool rope) {
  static const int kOverride = [] {
    const char* v = std::getenv("FLASHJIT_DECODE_CTAS_PER_SM");
    const int n = v ? std::atoi(v) : 0;
    return n >= 1 && n <= 8 ? n : 0;
  }();
  if (kOverride) return kOverride;
  return ResidentDecodeCtas(head_dim, kv_bytes, false, rope);
}

int DecodePersistentCtasPerSm(int head_dim, int kv_bytes) {
  return std::min(ResidentDecodeCtas(head_dim, kv_bytes, true, false),
                  DecodeCtasPerSm(head_dim, kv_bytes));
}

bool DecodeHeadMajor() {
  // Tuning knob for benchmarks: FLASHJIT_DECODE_ORDER=item launches (item, head tile) as
  // (blockIdx.x, blockIdx.y), the order before session 3.
  static const bool kHeadMajor = EnvMode("FLASHJIT_DECODE_ORDER", {{"item", 0}}, 1) != 0;
  return kHeadMajor;
}

namespace {
std::atomic<int> g_max_cluster_test{0};

}  // namespace

int DecodeMaxCluster(const Engine& engine, int device, int head_dim, int kv_bytes) {
  // 0: never, 1: 16-bit KV at head_dim 128 (default), 2: always.
  static const int kMode = EnvMode("FLASHJIT_DECODE_CLUSTER", {{"0", 0}, {"all", 2}}, 1);
  // Session 5 on the H200: 16-bit KV at D 128 (2 CTAs per SM) gained everywhere it applied; fp8
  // KV at D 128 (3 CTAs per SM, clusters of 3) lost 7-31 %, not understood yet.
  if (kMode == 0 || (kMode == 1 && !(kv_bytes == 2 && head_dim == 128))) return 0;
  if (!Sm90(engine, device)) return 0;
  const int forced = g_max_cluster_test.load(std::memory_order_relaxed);
  if (forced > 0) return std::clamp(forced, 2, 16);
  static const int kMax = [] {
    const char* v = std::getenv("FLASHJIT_DECODE_MAX_CLUSTER");
    const int n = v ? std::atoi(v) : 0;
    return n >= 2 ? std::min(n, 16) : 8;
  }();
  return kMax;
}

void SetDecodeMaxClusterForTesting(int n) { g_max_cluster_test.store(n > 0 ? n : 0); }

namespace {
std::atomic<int> g_persistent_test_mode{-1}, g_persistent_test_ctas{0};
}  // namespace

void SetDecodePersistentForTesting(int mode, int max_ctas) {
  g_persistent_test_mode.store(mode < 0 ? -1 : std::min(mode, 2));
  g_persistent_test_ctas.store(mode < 0 ? 0 : std::max(0, max_ctas));
}

int DecodePersistentMaxCtas() { return g_persistent_test_ctas.load(std::memory_order_relaxed); }

DecodePersistentMode DecodePersistent() {
  const int forced = g_persistent_test_mode.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<DecodePersistentMode>(forced);
  static const auto kMode = static_cast<DecodePersistentMode>(
      EnvMode("FLASHJIT_DECODE_PERSISTENT", {{"0", kPersistentNever}, {"1", kPersistentAlways}},
              kPersistentAuto));
  return kMode;
}

namespace {
std::atomic<int> g_merge_test{-1};
}  // namespace

DecodeMergeMode DecodeMerge() {
  const int forced = g_merge_test.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<DecodeMergeMode>(forced);
  static const auto kMode = static_cast<DecodeMergeMode>(EnvMode(
      "FLASHJIT_DECODE_MERGE", {{"fused", kMergeFused}, {"kernel", kMergeKernel}}, kMergeAuto));
  return kMode;
}

void SetDecodeMergeForTesting(int mode) { g_merge_test.store(mode < 0 ? -1 : std::min(mode, 2)); }

namespace {
std::atomic<int> g_graph_cluster_test{-1};
}  // namespace

int DecodeGraphClusterMax() {
  const int forced = g_graph_cluster_test.load(std::memory_order_relaxed);
  if (forced >= 0) return forced;
  static const int kMax = EnvMode("FLASHJIT_DECODE_GRAPH_CLUSTER",
                                  {{"0", 0}, {"1", 0}, {"2", 2}, {"4", 4}, {"8", 8}}, 2);
  return kMax;
}

void SetDecodeGraphClusterForTesting(int max) { g_graph_cluster_test.store(max < 0 ? -1 : max); }

namespace {
std::atomic<int> g_pdl_test{-1};
std::atomic<unsigned long long*> g_stamps{nullptr};
std::atomic<int> g_stamps_test{-1}, g_fast_index_test{-1}, g_steal_test{-1}, g_fixed_page_test{-1};
std::atomic<int64_t> g_stamps_ctas{0};
}  // namespace

bool DecodeStamps() {
  const int forced = g_stamps_test.load(std::memory_order_relaxed);
  if (forced >= 0) return forced != 0;
  static const bool kOn = EnvMode("FLASHJIT_DECODE_STAMPS", {{"1", 1}}, 0) != 0;
  return kOn;
}

void SetDecodeStampsForTesting(int mode) { g_stamps_test.store(mode < 0 ? -1 : (mode ? 1 : 0)); }

int DecodeFastIndexMode() {
  const int forced = g_fast_index_test.load(std::memory_order_relaxed);
  if (forced >= 0) return forced;
  static const int kMode =
      EnvMode("FLASHJIT_DECODE_FAST_INDEX", {{"0", kFastIndexNever}, {"1", kFastIndexAlways}},
              kFastIndexAuto);
  return kMode;
}

void SetDecodeFastIndexForTesting(int mode) {
  g_fast_index_test.store(mode < 0 ? -1 : (mode ? 1 : 0));
}

int DecodeFixedPage(int page_size) {
  const int forced = g_fixed_page_test.load(std::memory_order_relaxed);
  static const bool kNever = EnvMode("FLASHJIT_DECODE_FIXED_PAGE", {{"0", 1}}, 0) != 0;
  const bool on = forced >= 0 ? forced != 0 : !kNever;
  // By default from 16 keys a page (measured); the tests' override takes every page size the
  // variant allows.
  const int least = forced > 0 ? 1 : 16;
  const bool fits = page_size >= least && page_size <= attention::kDecodeTileKV &&
                    (page_size & (page_size - 1)) == 0;
  return on && fits ? page_size : 0;
}

void SetDecodeFixedPageForTesting(int mode) {
  g_fixed_page_test.store(mode < 0 ? -1 : (mode ? 1 : 0));
}

bool DecodeQSmem(int head_dim, DType kv_dtype) {
  static const bool kNever = EnvMode("FLASHJIT_DECODE_Q_SMEM", {{"0", 1}}, 0) != 0;
  return !kNever && head_dim == 256 && DTypeBytes(kv_dtype) == 2;
}

int DecodeStealMode() {
  const int forced = g_steal_test.load(std::memory_order_relaxed);
  if (forced >= 0) return forced;
  // Unset (or anything else): never, so that a plan's output has the same bits on every run.
  static const int kMode =
      EnvMode("FLASHJIT_DECODE_STEAL", {{"1", kStealAlways}, {"auto", kStealAuto}}, kStealNever);
  return kMode;
}

void SetDecodeStealForTesting(int mode) { g_steal_test.store(mode < 0 ? -1 : (mode ? 1 : 0)); }

namespace {
std::atomic<int> g_tail_test_percent{-1}, g_tail_test_piece{0}, g_tail_test_min{96},
    g_tail_test_waves{1};

// FLASHJIT_DECODE_TAIL: "percent", "percent,piece" or "percent,piece,waves" with percent 0..50
// (0: off), piece 0..65536 and waves 1..8; unset or anything else: the default (DecodeTailKnob's).
DecodeTailKnob ParseTailKnob(const char* v) {
  const DecodeTailKnob fallback;
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const long percent = std::strtol(v, &end, 10);
  long piece = 0, waves = 1;
  if (end != v && end && *end == ',') piece = std::strtol(end + 1, &end, 10);
  if (end != v && end && *end == ',') waves = std::strtol(end + 1, &end, 10);
  if (end == v || end == nullptr || *end != '\0' || percent < 0 || percent > 50 || piece < 0 ||
      piece > 65536 || waves < 1 || waves > 8)
    return fallback;
  DecodeTailKnob k;
  k.fraction = static_cast<double>(percent) / 100.0;
  k.piece = static_cast<int>(piece);
  k.max_waves = static_cast<int>(waves);
  return k;
}
}  // namespace

DecodeTailKnob DecodeTail() {
  const int forced = g_tail_test_percent.load(std::memory_order_relaxed);
  if (forced >= 0) {
    const int min_tiles = g_tail_test_min.load(std::memory_order_relaxed);
    return {static_cast<double>(forced) / 100.0,
            g_tail_test_piece.load(std::memory_order_relaxed),
            min_tiles,
            2 * min_tiles,
            min_tiles,
            min_tiles,
            min_tiles,
            g_tail_test_waves.load(std::memory_order_relaxed),
            true};
  }
  static const DecodeTailKnob kKnob = ParseTailKnob(std::getenv("FLASHJIT_DECODE_TAIL"));
  return kKnob;
}

void SetDecodeTailForTesting(int percent, int piece, int min_tiles, int max_waves) {
  g_tail_test_piece.store(std::max(0, piece));
  g_tail_test_waves.store(std::clamp(max_waves, 1, 8));
  g_tail_test_min.store(std::max(0, min_tiles));
  g_tail_test_percent.store(percent < 0 ? -1 : std::min(percent, 50));
}

void SetDecodeStampsBuffer(void* device_buffer, int64_t ctas) {
  g_stamps_ctas.store(device_buffer ? ctas : 0);
  g_stamps.store(static_cast<unsigned long long*>(device_buffer));
}

bool DecodePdl(const Engine& engine, int device, int64_t longest_keys, bool crowded) {
  int mode = g_pdl_test.load(std::memory_order_relaxed);
  if (mode < 0) {
    static const int kKnob = ParsePdlKnob(std::getenv("FLASHJIT_DECODE_PDL"));  // -1: unset
    mode = kKnob;
  }
  // FLASHJIT_DECODE_PDL (or its test hook) first; else the engine-wide rule (FLASHJIT_PDL, then
  // decode's default).
  if (mode == 0) return false;
  if (mode == 1) return Sm90(engine, device);
  return UsePdl(engine, device, longest_keys <= kDecodePdlMaxKeys && !crowded);
}

bool DecodePdlCrowds(const BatchDecodeConfig& c, const DecodeScheduleLimits& limits, int64_t ctas,
                     int64_t tiles, bool merge_kernel) {
  if (DecodePlanModel() < kPlanModelS18 || c.cuda_graph || merge_kernel) return false;
  if (DTypeBytes(c.kv_dtype) != 1 || c.head_dim != 128) return false;
  return ctas > limits.sms / 2 && ctas <= limits.slots - limits.sms && tiles >= 4;
}

bool DecodePlanPdl(const Engine& engine, const BatchDecodeConfig& c,
                   const DecodeScheduleLimits& limits, const DecodePlanForm& form) {
  return DecodePdl(engine, c.device, form.longest,
                   DecodePdlCrowds(c, limits, form.units, form.longest_tiles, form.merge_kernel));
}

void SetDecodePdlForTesting(int mode) { g_pdl_test.store(mode < 0 ? -1 : (mode ? 1 : 0)); }

Status LaunchDecode(const runtime::Kernel& kernel, const DecodeSpec& spec,
                    const attention::DecodeParams& p, int grid_items,
                    const attention::DecodeMergeParams& mp, int merge_items, CUstream stream,
                    int persistent_ctas, bool pdl, bool merge_pdl) {
  // Head-major order: the CTAs of one work item (one per kv head) are neighbours in the grid, so
  // they start together and read each page's rows of all heads at about the same time.
  const int64_t head_tiles = int64_t(p.num_kv_heads) * p.q_tiles;
  attention::DecodeParams lp = p;
  runtime::LaunchConfig cfg;
  cfg.block_x = attention::kDecodeThreads;
  cfg.dynamic_smem = static_cast<uint32_t>(DecodeSmemBytes(spec));
  cfg.programmatic = pdl;
  if (spec.stamps) {
    lp.stamps = g_stamps.load();
    const int64_t ctas = persistent_ctas > 0 ? persistent_ctas : int64_t(grid_items) * head_tiles;
    if (!lp.stamps || ctas > g_stamps_ctas.load())
      return Status::InvalidArgument(fmt::format(
          "FLASHJIT_DECODE_STAMPS: a launch of {} CTAs needs a stamps buffer of as many entries "
          "(SetDecodeStampsBuffer: {} entries)",
          ctas, g_stamps_ctas.load()));
  }
  if (persistent_ctas > 0) {  // entry 2: the persistent grid (no merge launch)
    cfg.grid_x = static_cast<uint32_t>(persistent_ctas);
    return kernel.Launch(2, cfg, &lp, stream);
  }
  lp.head_major =
      (p.cluster > 1 || DecodeHeadMajor()) && int64_t(grid_items) * head_tiles <= 0x7fffffff;
  if (p.cluster > 1 && !lp.head_major)
    return Status::InvalidArgument(fmt::format(
        "decode: {} work items x {} heads exceed one grid dimension", grid_items, head_tiles));
  // The divisors of DecodeCtaIndexFast (every launch sets them; kFastIndex variants read them).
  const uint32_t c = p.cluster > 1 ? static_cast<uint32_t>(p.cluster) : 1u;
  lp.grid_heads = lp.head_major ? static_cast<int32_t>(head_tiles) : 1;
  lp.grid_cluster_div = MakeFastDivisor(c);
  lp.grid_item_div = MakeFastDivisor(c * static_cast<uint32_t>(lp.grid_heads));
  cfg.grid_x = static_cast<uint32_t>(lp.head_major ? grid_items * head_tiles : grid_items);
  cfg.grid_y = static_cast<uint32_t>(lp.head_major ? 1 : head_tiles);
  if (p.cluster > 1) cfg.cluster_x = static_cast<uint32_t>(p.cluster);
  FLASHJIT_RETURN_IF_ERROR(kernel.Launch(0, cfg, &lp, stream));
  if (merge_items <= 0) return Status::Ok();
  // A CTA per (item, query head, 32 columns), kMergeWarps warps splitting the partials.
  runtime::LaunchConfig mcfg;
  mcfg.grid_x = static_cast<uint32_t>(merge_items);
  mcfg.grid_y = static_cast<uint32_t>(p.num_qo_heads * (spec.head_dim / 32));
  mcfg.block_x = attention::kMergeWarps * 32;
  mcfg.programmatic = merge_pdl;
  return kernel.Launch(1, mcfg, &mp, stream);
}

}  // namespace flashjit::ops
