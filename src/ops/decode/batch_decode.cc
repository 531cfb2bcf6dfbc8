// BatchDecode: plan (host schedule -> workspace) and run (two launches) over a paged KV cache.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "src/engine/engine_impl.h"
#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/runtime/copy.h"

namespace flashjit {

using ops::Present;

// Workspace layout (fixed by the capacity, so that graph-mode pointers never move):
//   [header: num_work, num_merge, persistent CTAs (0: not persistent), 0] [work items] [merge
//   items] [merge counters: merge items x CTAs per item, zero after every launch] [units of a
//   persistent plan: one per (work item, head tile) of the capacity] [partial lse] [partial o]
struct BatchDecode::State {
  Engine* engine = nullptr;
  BatchDecodeConfig cfg;
  int q_tiles = 1;
  ops::DecodeScheduleLimits limits;
  // Outside graph mode, plans whose options take RoPE: their shared memory may hold fewer CTAs
  // an SM (fp8 caches: ops::DecodeCtasPerSm). Graph mode keeps `limits` (its grid is fixed at
  // Create).
  ops::DecodeScheduleLimits limits_rope;
  int32_t cap_items = 0, cap_merge = 0, cap_units = 0;
  size_t off_work = ops::kDecodePlanHeaderBytes, off_merge = 0, off_count = 0, off_claims = 0,
         off_units = 0, off_plse = 0, off_po = 0, total = 0;
  // 16-bit KV (and, in graph mode, the forced mode): plans may take the persistent kernel.
  bool persistent_ok = false;
  ops::DecodePersistentMode persistent_mode = ops::kPersistentAuto;  // at Create

  bool planned = false;
  int32_t batch = 0, n_items = 0, n_merge = 0, cluster = 0, persistent_ctas = 0;
  bool pdl = false;  // the attention launch takes programmatic dependent launch (ops::DecodePdl)
  bool merge_kernel = false;  // the plan takes the merge kernel (DecodePlanForm)
  // At Create: graph mode launches the merge kernel on every replay (DecodeGraphMergeKernel);
  // the merge launch takes PDL (ops::DecodePdl's rule allows it).
  bool graph_merge = false, merge_pdl = false;
  // At Create: graph mode launches every replay in clusters of this many CTAs (0: none), and its
  // plans cluster by exactly that many chunks (ops::DecodeGraphCluster).
  int graph_cluster = 0;
  int64_t nnz = 0, max_page_id = -1;
  ops::DecodeSpec spec;
  const runtime::Kernel* kernel = nullptr;
  DecodeOptions options;
  char* workspace = nullptr;
  std::vector<char> staging;
};

static size_t Align16(size_t x) { return (x + 15) / 16 * 16; }

namespace ops {

bool DecodeGraphMergeKernel(const BatchDecodeConfig& c, const DecodeScheduleLimits& limits) {
  // Plans of one wave split at most slots / (min_partials x ctas_per_item) requests into
  // min_partials chunks or more: a wrapper whose every batch fits that has plans that take the
  // merge kernel often, and its empty launches (plans that do not split) are short. Groups of at
  // least 4 query heads only: in graph mode (session 15, second consolidated call) the merge
  // kernel cut 21-42 % from one to four kv heads at B=1 (groups 7-8) and 1-16 % at groups of 4,
  // but added 1.5-10 % at B=1 L=1k-4k for groups of 1 and 2 (mha; Gemma-2), whose last CTAs
  // merge one or two rows a CTA.
  const int group = c.num_qo_heads / std::max(1, c.num_kv_heads);
  return c.cuda_graph && DecodeMerge() != kMergeFused && group >= 4 &&
         int64_t(c.max_batch_size) * limits.ctas_per_item * limits.merge_kernel_min_partials <=
             limits.slots;
}

namespace {
// The CTAs `slots` hold at once in clusters of more than 2: 10/11 of them, the H200's 240 in
// clusters of 8 of its 264 slots (248 in clusters of 4; session 13's stamps).
int ClusterSlots(int slots) { return slots * 10 / 11; }
}  // namespace

int DecodeGraphCluster(const Engine& engine, const BatchDecodeConfig& c,
                       const DecodeScheduleLimits& limits) {
  if (!c.cuda_graph || DecodePersistentAllowed(c, DecodePersistent())) return 0;
  const int most = std::min(DecodeGraphClusterMax(),
                            DecodeMaxCluster(engine, c.device, c.head_dim, DTypeBytes(c.kv_dtype)));
  const int64_t ctas = int64_t(c.max_batch_size) * limits.ctas_per_item;  // unsplit
  // Clusters of 2 (the default): for wrappers past the merge kernel's small batches. Measured in
  // graph mode on the H200 (session 16, against no clusters, same call): -9 to -23 % where
  // 16-64 requests split in two (B=16 L=1k-2k at 8 kv heads; B=64 L=512-2k at 1-2 kv heads;
  // B=16 L=512-2k at 4), -10 to -13 % on unsplit B=16 plans of 256-512 keys (8 kv heads), but
  // +2 to +5 % (0.3-0.5 us) on B=1 plans that take the merge kernel instead.
  if (most == 2)
    return ctas * 2 <= limits.slots && ctas * limits.merge_kernel_min_partials > limits.slots ? 2
                                                                                              : 0;
  // Larger sizes (the knob): the largest that fits. Same call: -5 to -13 % at B=1-16 L=512-2k
  // where they cluster, +15 to +39 % at L=4k-16k (the plans of 240 slots split differently).
  for (int g = 8; g >= 2; g /= 2) {
    const int64_t room = g > 2 ? ClusterSlots(limits.slots) : limits.slots;
    if (g <= most && ctas * g <= room) return g;
  }
  return 0;
}

int32_t BatchDecodeMaxItems(const BatchDecodeConfig& c, const DecodeScheduleLimits& limits) {
  // Graph mode launches this many items on every replay, and all but the plan's exit at once,
  // which costs a short plan's CTAs time. Session 16 (call 4, graph mode, one wave against four):
  // -2 to -13 % on 37 of 143 rows (B=1-16 up to 16k keys; B=64-256 at 1-4 kv heads and short
  // contexts), but +6 % on fp8 B=64 L=32k, whose plan of 3.88 waves no longer fitted. So one wave
  // where the wrapper's batch fits one wave unsplit, four (as outside graph mode) where it does
  // not.
  const bool one_wave =
      c.cuda_graph && int64_t(c.max_batch_size) * limits.ctas_per_item <= limits.slots;
  return DecodeMaxItems(c.max_batch_size, limits, one_wave ? 1 : 4);
}

DecodeScheduleLimits BatchDecodeLimits(const Engine& engine, const BatchDecodeConfig& c, int sms,
                                       bool rope) {
  DecodeScheduleLimits limits;
  const int group = c.num_qo_heads / c.num_kv_heads;
  const int q_tiles = (group + attention::kDecodeQTile - 1) / attention::kDecodeQTile;
  limits.ctas_per_item = c.num_kv_heads * q_tiles;
  limits.slots = sms * DecodeCtasPerSm(c.head_dim, DTypeBytes(c.kv_dtype), rope);
  limits.persistent_slots = sms * DecodePersistentCtasPerSm(c.head_dim, DTypeBytes(c.kv_dtype));
  limits.sms = sms;
  // A CTA alone on its SM reads a tile in less time than two CTAs sharing an SM take each, so a
  // batch whose unsplit items fit one per SM gains less from a split (and its merge) than the
  // wave count says. Measured on the H200 (16-bit KV, D 128): B=16 L=1k unsplit, 128 lone CTAs,
  // 24.4 us back to back against 25.7 split in two with the merge (sessions 3 and 4); 0.55 keeps
  // that batch unsplit and changes no other shape of the benchmark. (With the cluster merge,
  // priced lower, that batch splits in two again: 23.8-24.0 us, session 5.)
  if (DTypeBytes(c.kv_dtype) == 2 && c.head_dim == 128 && limits.slots > sms)
    limits.lone_tile_cost = 0.55;
  // Uniform splits merge in a thread-block cluster. A captured graph keeps one launch shape: a
  // graph-mode wrapper fixes its cluster size at Create, and its plans cluster by exactly that
  // many chunks (DecodeGraphCluster); over 2, every launch holds only the slots of that size.
  const int cluster_slots = ClusterSlots(limits.slots);
  if (!c.cuda_graph) {
    limits.max_cluster = DecodeMaxCluster(engine, c.device, c.head_dim, DTypeBytes(c.kv_dtype));
  } else if (const int g = DecodeGraphCluster(engine, c, limits); g > 1) {
    limits.max_cluster = limits.min_cluster = g;
    if (g > 2) limits.slots = cluster_slots;
  }
  // The merge kernel (FLASHJIT_DECODE_MERGE=fused takes it out of the model); in graph mode only
  // where the wrapper launches it on every replay (DecodeGraphMergeKernel).
  if (DecodeMerge() != kMergeFused && (!c.cuda_graph || DecodeGraphMergeKernel(c, limits)))
    limits.merge_kernel_base = 1.1;
  // Session 13 (knob FLASHJIT_DECODE_PLAN_MODEL=s12: without): the last CTA's merge priced by
  // its round trips, and clusters of more than 2 CTAs only where the GPU holds all of them
  // (DecodeScheduleLimits::merge_rows_per_warp, cluster_max_ctas: ClusterSlots).
  if (DecodePlanModel() != kPlanModelS12) {
    const int rows = group < attention::kDecodeQTile ? group : attention::kDecodeQTile;
    constexpr int kWarps = attention::kDecodeThreads / 32;
    limits.merge_rows_per_warp = (rows + kWarps - 1) / kWarps;
    limits.merge_batch = c.head_dim <= 128 ? 16 : 8;  // MergeHeadWarp's kBatch
    // A round trip is about 0.73 us, and a 16-bit tile's time scales with its bytes (about 1.9 us
    // at D 128): the price in tiles scales inversely with the head dim (session 14: at D 128's
    // 0.38, D 64's plans at B=1 L=4k split into 64 one-tile chunks and read 22.7 % slower than
    // with 32). Measured at D 64 and 128; D 256 and fp8 keep 0.38.
    if (DTypeBytes(c.kv_dtype) == 2 && c.head_dim <= 128)
      limits.merge_round_trip = 0.38 * 128.0 / c.head_dim;
    limits.cluster_max_ctas = cluster_slots;
  }
  // Session 18: fp8 caches at D 128 (3 CTAs an SM), fitted on the H200 (docs/perf/decode.md).
  // Session 17's chunk sweep (fp8 e4m3, 32/8 heads, 1-256 requests of 1k-16k keys) found the s13
  // model's splits up to 21 % slower than the best chunk: a CTA alone on its SM reads a tile in
  // about 3/4 of the time one of three takes (B=16 L=1k: 128 CTAs of 16 tiles), the last wave's
  // time follows the CTAs it puts on an SM (B=64 L=1k: 512 CTAs in 1.29 waves, 52.6 us queued,
  // against 66.4 split in two), and the last CTA's merge costs about 6 tiles. Plans of few lone
  // CTAs, though, lost up to 36 % back to back when their launch took programmatic dependent
  // launch (the next call's CTAs wait beside them: DecodePdlCrowds, which now takes PDL from
  // them), and up to 14 % in graph mode. So a lone tile costs 0.75 outside graph mode, 0.8 where
  // the merge kernel follows (that launch keeps PDL) and in graph mode. Session 18's A/Bs: against
  // s13, queued faster at every changed shape (call 1, stream mode: -2.8 to -29 %; call 2 at 0.8,
  // graph mode: -0.3 to -32 %); the final model against the form with 0.8 everywhere and PDL by
  // keys only (call 8, 25 shapes) queued -13.3 to +3.4 % (the rises at most 0.55 us, where
  // launches lost PDL), back to back -0.6 to -21 %. D 64 (4 CTAs an SM) keeps the s13 model: its
  // two changed shapes read 13-22 % faster queued but 8-25 % slower back to back (call 1, with
  // PDL).
  if (DecodePlanModel() >= kPlanModelS18A && DTypeBytes(c.kv_dtype) == 1 && c.head_dim == 128 &&
      limits.slots > sms) {
    limits.price_last_wave = true;
    limits.lone_tile_cost = 0.8;
    limits.fused_merge_floor = 6.0;
    if (DecodePlanModel() >= kPlanModelS18 && !c.cuda_graph) {
      limits.lone_tile_cost = 0.75;
      limits.lone_tile_cost_merge_kernel = 0.8;
    }
  }
  // Tail pieces (CutDecodeTail), outside graph mode (a captured launch keeps its grid), and not
  // where a slot is an SM (DecodeTailKnob: gemma2 at D 256 lost at every shape cut with one CTA an
  // SM; with fp8's two since session 24 it gains from 256 tiles a slot).
  if (const DecodeTailKnob tail = DecodeTail();
      !c.cuda_graph && (tail.lone_slots || limits.slots > sms)) {
    limits.tail_fraction = tail.fraction;
    limits.tail_piece = tail.piece;
    limits.tail_min_tiles = c.page_size < 16 || c.head_dim == 256
                                ? std::max(tail.min_tiles, tail.min_tiles_strict)
                                : tail.min_tiles;
    limits.tail_min_wave_tiles = tail.min_wave_tiles;
    limits.tail_min_whole_tiles =
        DTypeBytes(c.kv_dtype) == 1 ? tail.min_whole_tiles_fp8 : tail.min_whole_tiles;
    limits.tail_max_waves = tail.max_waves;
  }
  return limits;
}

bool DecodePersistentAllowed(const BatchDecodeConfig& c, DecodePersistentMode mode) {
  // 16-bit KV only (the fp8 epilogue would need two free stages); at head_dim 256 the
  // persistent kernel spills (255 registers, one CTA per SM), and at head_dim 64 it read 8-20 %
  // slower than one CTA per unit at every shape that took it (session 14: B=1 L=4k / 16k,
  // B=16 L=1k / 4k, B=64 L=1k), so only a forced mode takes it there.
  return DTypeBytes(c.kv_dtype) == 2 && (c.head_dim == 128 || mode == kPersistentAlways) &&
         mode != kPersistentNever && (!c.cuda_graph || mode == kPersistentAlways);
}

DecodePlanForm ChooseDecodePlanForm(const BatchDecodeConfig& c, DecodePersistentMode mode,
                                    const DecodeSchedule& sched,
                                    const DecodeScheduleLimits& limits) {
  DecodePlanForm f;
  f.units = static_cast<int64_t>(sched.work.size()) * limits.ctas_per_item;
  for (const attention::DecodeWorkItem& w : sched.work)
    f.longest = std::max<int64_t>(f.longest, w.kv_end - w.kv_start);
  f.longest_tiles = (f.longest + attention::kDecodeTileKV - 1) / attention::kDecodeTileKV;
  // A persistent grid (16-bit KV, not merged by clusters): resident CTAs walk lists of units.
  // Default: DefaultPersistent (short units, 1-2 per resident CTA), outside graph mode (a
  // captured launch keeps one kernel; graph mode takes the persistent kernel on the wrapper's
  // fixed grid only when FLASHJIT_DECODE_PERSISTENT=1 forces it for every plan).
  f.persistent =
      DecodePersistentAllowed(c, mode) && sched.cluster <= 1 && f.units > 0 &&
      (mode == kPersistentAlways ||
       (!c.cuda_graph && DefaultPersistent(f.units, f.longest_tiles, limits.PersistentSlots())));
  // The CTA index from the launch's divisors (DecodeFastIndexMode): by default for plans of one
  // CTA per unit with more CTAs than resident slots, outside graph mode (a captured launch keeps
  // one kernel).
  f.fast_index = DecodeFastIndexMode() == kFastIndexAuto && !c.cuda_graph && !f.persistent &&
                 f.units > limits.slots;
  // The merge kernel, where the limits offer it (not in graph mode unless the wrapper launches it
  // on every replay), for plans of one CTA per unit that merge through the workspace; by default
  // where the model prices it below the last CTA's merge (DecodeMergeCost).
  const DecodeMergeMode merge = DecodeMerge();
  int64_t most = 0;
  for (const attention::DecodeMergeItem& m : sched.merge)
    most = std::max<int64_t>(most, m.num_partials);
  bool kernel_cheaper = false;
  const int64_t waves = (f.units + limits.slots - 1) / std::max(1, limits.slots);
  if (most > 0) DecodeMergeCost(most, waves, limits, &kernel_cheaper);
  f.merge_kernel = limits.merge_kernel_base > 0 && !f.persistent && sched.cluster <= 1 &&
                   most > 0 && (merge == kMergeKernel || (merge == kMergeAuto && kernel_cheaper));
  return f;
}

}  // namespace ops

BatchDecode::BatchDecode(std::unique_ptr<State> state) : state_(std::move(state)) {}
BatchDecode::~BatchDecode() = default;

Result<std::unique_ptr<BatchDecode>> BatchDecode::Create(Engine& engine,
                                                         const BatchDecodeConfig& c) {
  if (c.num_kv_heads <= 0 || c.num_qo_heads <= 0 || c.num_qo_heads % c.num_kv_heads != 0)
    return Status::InvalidArgument(
        fmt::format("num_qo_heads / num_kv_heads: {} / {}; both > 0 and num_qo_heads a multiple of "
                    "num_kv_heads",
                    c.num_qo_heads, c.num_kv_heads));
  FLASHJIT_RETURN_IF_ERROR(ops::CheckDecodeDTypes(c.q_dtype, c.kv_dtype, c.head_dim));
  if (c.page_size <= 0 || c.page_size > (1 << 20))
    return Status::InvalidArgument(
        fmt::format("page_size: {}; allowed: 1 .. 1048576", c.page_size));
  if (c.max_batch_size <= 0 || c.max_batch_size > (1 << 20))
    return Status::InvalidArgument(
        fmt::format("max_batch_size: {}; allowed: 1 .. 1048576", c.max_batch_size));
  if (c.layout != KVLayout::kNHD && c.layout != KVLayout::kHND)
    return Status::InvalidArgument("layout: must be KVLayout::kNHD or KVLayout::kHND");
  if (c.device < 0) return Status::InvalidArgument(fmt::format("device: {} < 0", c.device));
  auto s = std::make_unique<State>();
  s->engine = &engine;
  s->cfg = c;
  const int group = c.num_qo_heads / c.num_kv_heads;
  s->q_tiles = (group + attention::kDecodeQTile - 1) / attention::kDecodeQTile;
  FLASHJIT_ASSIGN_OR_RETURN(const int sms, runtime::MultiprocessorCount(engine, c.device));
  s->limits = ops::BatchDecodeLimits(engine, c, sms);
  // Graph mode in clusters: the grid (cap_items work items) a whole number of clusters.
  s->graph_cluster = c.cuda_graph && s->limits.max_cluster > 1 ? s->limits.max_cluster : 0;
  const int32_t per_cluster = std::max(1, s->graph_cluster);
  s->cap_items =
      (ops::BatchDecodeMaxItems(c, s->limits) + per_cluster - 1) / per_cluster * per_cluster;
  s->limits.max_items = s->cap_items;
  // RoPE's plans keep to the same capacity (their schedule stops at max_items).
  s->limits_rope = ops::BatchDecodeLimits(engine, c, sms, true);
  s->limits_rope.max_items = s->cap_items;
  s->cap_merge = c.max_batch_size;
  s->off_merge = Align16(s->off_work + s->cap_items * sizeof(attention::DecodeWorkItem));
  s->off_count = Align16(s->off_merge + s->cap_merge * sizeof(attention::DecodeMergeItem));
  // The limits offer the merge kernel in graph mode exactly where the wrapper launches it.
  s->graph_merge = c.cuda_graph && s->limits.merge_kernel_base > 0;
  s->merge_pdl = ops::DecodePdl(engine, c.device, 0);
  s->persistent_mode = ops::DecodePersistent();
  s->persistent_ok = ops::DecodePersistentAllowed(c, s->persistent_mode);
  // Units: every (item, head tile) once; the kernel also reads the entry of each CTA of the
  // grid, at most cap_items x CTAs per item in graph mode.
  s->cap_units = s->persistent_ok ? s->cap_items * s->limits.ctas_per_item : 0;
  // Pair stealing's claim words: one per (partial slot, head tile), zeroed with the counters.
  s->off_claims =
      Align16(s->off_count + size_t(s->cap_merge) * s->limits.ctas_per_item * sizeof(int32_t));
  s->off_units =
      Align16(s->off_claims + size_t(s->cap_items) * s->limits.ctas_per_item * sizeof(uint64_t));
  s->off_plse = Align16(s->off_units + size_t(s->cap_units) * sizeof(attention::DecodeUnit));
  s->off_po = Align16(s->off_plse + size_t(s->cap_items) * c.num_qo_heads * sizeof(float));
  s->total = s->off_po + size_t(s->cap_items) * c.num_qo_heads * c.head_dim * sizeof(float);
  return std::unique_ptr<BatchDecode>(new BatchDecode(std::move(s)));
}

size_t BatchDecode::WorkspaceBytes() const { return state_->total; }

Status BatchDecode::Plan(const int32_t* kv_indptr, const int32_t* kv_last_page_len,
                         int32_t batch_size, const DecodeOptions& options, void* workspace,
                         size_t workspace_bytes, void* stream, const int32_t* kv_indices,
                         int64_t num_pages) {
  State& s = *state_;
  const BatchDecodeConfig& c = s.cfg;
  if (batch_size < 0 || batch_size > c.max_batch_size)
    return Status::InvalidArgument(
        fmt::format("batch_size: {}; allowed: 0 .. max_batch_size ({}) of this wrapper", batch_size,
                    c.max_batch_size));
  if (batch_size > 0 && (!kv_indptr || !kv_last_page_len))
    return Status::InvalidArgument("kv_indptr / kv_last_page_len: null host arrays");
  if (!workspace || workspace_bytes < s.total)
    return Status::InvalidArgument(
        fmt::format("workspace: {} bytes at {}; this wrapper needs {} (WorkspaceBytes())",
                    workspace_bytes, workspace, s.total));
  if (c.cuda_graph && s.workspace && s.workspace != workspace)
    return Status::InvalidArgument(
        "workspace: graph mode needs the same workspace in every Plan() (a captured graph "
        "holds its address)");
  FLASHJIT_RETURN_IF_ERROR(ops::CheckDecodeOptions(options, c.num_qo_heads, c.device));
  ops::DecodeSpec spec = ops::DecodeSpecFor(c.q_dtype, c.kv_dtype, c.head_dim, options);
  spec.page_size = static_cast<uint8_t>(ops::DecodeFixedPage(c.page_size));
  if (c.cuda_graph && s.planned && std::memcmp(&spec, &s.spec, sizeof(spec)) != 0)
    return Status::InvalidArgument(
        "options: graph mode cannot change the kernel variant between plans (soft cap, ALiBi, "
        "RoPE on/off)");

  // The page table, checked in full before anything changes.
  std::vector<ops::DecodeRequest> requests(batch_size);
  if (batch_size > 0 && kv_indptr[0] != 0)
    return Status::InvalidArgument(fmt::format("kv_indptr[0]: {}; must be 0", kv_indptr[0]));
  for (int32_t b = 0; b < batch_size; ++b) {
    const int64_t pages = int64_t(kv_indptr[b + 1]) - kv_indptr[b];
    const int32_t last = kv_last_page_len[b];
    if (pages < 0)
      return Status::InvalidArgument(fmt::format("kv_indptr: decreases at request {} ({} -> {})", b,
                                                 kv_indptr[b], kv_indptr[b + 1]));
    if (pages == 0 ? last != 0 : (last < 1 || last > c.page_size))
      return Status::InvalidArgument(fmt::format(
          "kv_last_page_len[{}]: {} with {} pages; allowed: 1 .. page_size ({}), or 0 with no "
          "page",
          b, last, pages, c.page_size));
    const int64_t len = pages == 0 ? 0 : (pages - 1) * c.page_size + last;
    if (len > 0x7fffffff)
      return Status::InvalidArgument(fmt::format("request {}: kv_len {} exceeds 2^31 - 1", b, len));
    ops::DecodeRequest& r = requests[b];
    r.page_begin = kv_indptr[b];
    r.kv_len = static_cast<int32_t>(len);
    r.kv_start = ops::DecodeFirstKey(len, options.window_left, spec.page_size);
  }
  const int64_t nnz = batch_size > 0 ? kv_indptr[batch_size] : 0;
  int64_t max_page = -1;
  if (kv_indices) {
    if (num_pages <= 0)
      return Status::InvalidArgument(fmt::format(
          "num_pages: {}; give the cache's page count with host kv_indices", num_pages));
    for (int64_t i = 0; i < nnz; ++i) {
      if (kv_indices[i] < 0 || kv_indices[i] >= num_pages)
        return Status::InvalidArgument(
            fmt::format("kv_indices[{}]: page {} out of range; allowed: 0 .. {}", i, kv_indices[i],
                        num_pages - 1));
      max_page = std::max<int64_t>(max_page, kv_indices[i]);
    }
  }
  const ops::DecodeScheduleLimits& limits = spec.rope && !c.cuda_graph ? s.limits_rope : s.limits;
  ops::DecodeSchedule sched = ops::BuildDecodeSchedule(requests, limits);
  if (static_cast<int32_t>(sched.work.size()) > s.cap_items)
    return Status::Internal(fmt::format("decode plan: {} work items exceed the capacity {}",
                                        sched.work.size(), s.cap_items));
  if (spec.page_size)
    for (const attention::DecodeWorkItem& w : sched.work)
      if (w.kv_end > w.kv_start && w.kv_start % spec.page_size != 0)
        return Status::Internal(
            fmt::format("decode plan: item of request {} starts at key {}, not on a page of {}",
                        w.request, w.kv_start, int(spec.page_size)));
  const ops::DecodePlanForm form = ops::ChooseDecodePlanForm(c, s.persistent_mode, sched, limits);
  const int64_t n_units = form.units;
  const bool persistent = form.persistent;
  ops::DecodePersistentPlan units;
  if (persistent) {
    const int max_ctas = ops::DecodePersistentMaxCtas();
    units = ops::AssignDecodeUnits(
        sched.work, limits.ctas_per_item,
        max_ctas > 0 ? std::min(max_ctas, limits.PersistentSlots()) : limits.PersistentSlots());
    if (static_cast<int64_t>(units.units.size()) > s.cap_units)
      return Status::Internal(fmt::format("decode plan: {} units exceed the capacity {}",
                                          units.units.size(), s.cap_units));
  }
  if (form.fast_index) spec.fast_index = 1;
  // Pair stealing (ops::DecodeStealMode): plans merged by their last CTA, one CTA per unit,
  // outside graph mode (a captured launch keeps one kernel); off by default (the output's bits
  // would vary from run to run), under "auto" only 16-bit KV plans of one wave with chunks of at
  // least kDecodeStealAutoTiles tiles (where it was measured to win).
  const int steal_mode = ops::DecodeStealMode();
  const bool steal_auto =
      steal_mode == ops::kStealAuto && DTypeBytes(c.kv_dtype) == 2 && n_units <= limits.slots;
  if ((steal_mode == ops::kStealAlways || steal_auto) && !c.cuda_graph && !persistent &&
      !form.merge_kernel &&
      ops::MarkDecodeStealPairs(sched, spec.stages + 2,
                                steal_auto ? ops::kDecodeStealAutoTiles : 0) > 0)
    spec.steal = 1;
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(*s.engine, spec, c.device));
  // Header, work and merge items, zeroed counters, and the units of a persistent plan.
  const size_t bytes = s.off_units + units.units.size() * sizeof(attention::DecodeUnit);
  s.staging.assign(bytes, 0);
  // The merge kernel's plans: no item names a merge item (their last CTAs do not merge), and
  // header[3] gives the merge kernel its item count (0: its launch, if any, exits at once).
  if (form.merge_kernel)
    for (attention::DecodeWorkItem& w : sched.work) w.merge = -1;
  // header[4]: the plan's cluster size (diagnostics and tests; the kernels do not read it).
  const int32_t header[ops::kDecodePlanHeaderBytes / 4] = {
      static_cast<int32_t>(sched.work.size()), static_cast<int32_t>(sched.merge.size()), units.ctas,
      form.merge_kernel ? static_cast<int32_t>(sched.merge.size()) : 0, sched.cluster};
  std::memcpy(s.staging.data(), header, sizeof(header));
  if (!units.units.empty())
    std::memcpy(s.staging.data() + s.off_units, units.units.data(),
                units.units.size() * sizeof(attention::DecodeUnit));
  std::memcpy(s.staging.data() + s.off_work, sched.work.data(),
              sched.work.size() * sizeof(attention::DecodeWorkItem));
  std::memcpy(s.staging.data() + s.off_merge, sched.merge.data(),
              sched.merge.size() * sizeof(attention::DecodeMergeItem));
  FLASHJIT_RETURN_IF_ERROR(runtime::CopyToDeviceAsync(*s.engine, workspace, s.staging.data(), bytes,
                                                      static_cast<CUstream>(stream)));
  s.planned = true;
  s.batch = batch_size;
  s.n_items = header[0];
  s.n_merge = header[1];
  s.cluster = sched.cluster;
  s.persistent_ctas = units.ctas;
  s.pdl = ops::DecodePlanPdl(*s.engine, c, limits, form);
  s.merge_kernel = form.merge_kernel;
  s.nnz = nnz;
  s.max_page_id = max_page;
  s.spec = spec;
  s.kernel = kernel;
  s.options = options;
  s.workspace = static_cast<char*>(workspace);
  return Status::Ok();
}

Status BatchDecode::Run(const TensorView& q, const TensorView& k_cache, const TensorView& v_cache,
                        const TensorView& kv_indices, const TensorView& out, const TensorView& lse,
                        void* stream) {
  using namespace ops;
  State& s = *state_;
  const BatchDecodeConfig& c = s.cfg;
  if (!s.planned) return Status::InvalidArgument("Run: call Plan() first");
  const auto q_dtypes = {DType::kF16, DType::kBF16};
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(q, "q", 3, q_dtypes));
  if (q.dtype != c.q_dtype)
    return Status::InvalidArgument(fmt::format("q: dtype {}, but the wrapper was created for {}",
                                               DTypeName(q.dtype), DTypeName(c.q_dtype)));
  if (c.cuda_graph ? q.shape[0] < s.batch : q.shape[0] != s.batch)
    return Status::InvalidArgument(
        fmt::format("q: batch dim {} but the plan has {} requests{}", q.shape[0], s.batch,
                    c.cuda_graph ? " (graph mode: at least that many rows)" : ""));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(q, "q", 1, c.num_qo_heads, "num_qo_heads"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(q, "q", 2, c.head_dim, "head_dim"));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(out, "out", 3, q_dtypes));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(out, "out", q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(out, "out", q, "q"));
  const auto kv_dtypes = {c.kv_dtype};
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(k_cache, "k_cache", 4, kv_dtypes));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(v_cache, "v_cache", 4, kv_dtypes));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(v_cache, "v_cache", k_cache, "k_cache"));
  const bool nhd = c.layout == KVLayout::kNHD;
  const char* expect = nhd ? "[num_pages, page_size, num_kv_heads, head_dim] (NHD)"
                           : "[num_pages, num_kv_heads, page_size, head_dim] (HND)";
  if (k_cache.shape[nhd ? 1 : 2] != c.page_size || k_cache.shape[nhd ? 2 : 1] != c.num_kv_heads ||
      k_cache.shape[3] != c.head_dim)
    return Status::InvalidArgument(
        fmt::format("k_cache: {}; expected {} with page_size {}, {} kv "
                    "heads, head_dim {}",
                    k_cache.Describe(), expect, c.page_size, c.num_kv_heads, c.head_dim));
  for (int d = 0; d < 4; ++d)
    if (k_cache.strides[d] != v_cache.strides[d] && k_cache.shape[d] > 1)
      return Status::InvalidArgument(fmt::format("v_cache: strides must equal k_cache's ({} vs {})",
                                                 v_cache.Describe(), k_cache.Describe()));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(kv_indices, "kv_indices", 1, {DType::kI32}));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(kv_indices, "kv_indices"));
  if (kv_indices.shape[0] < s.nnz)
    return Status::InvalidArgument(fmt::format(
        "kv_indices: {} entries, but the plan's kv_indptr ends at {}", kv_indices.shape[0], s.nnz));
  if (s.max_page_id >= k_cache.shape[0])
    return Status::InvalidArgument(
        fmt::format("kv_indices: page {} (from Plan) is out of range for k_cache's {} pages",
                    s.max_page_id, k_cache.shape[0]));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(out, "out"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(k_cache, "k_cache"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(v_cache, "v_cache"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVStrides(k_cache, "k_cache"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVStrides(v_cache, "v_cache"));
  for (const auto& [t, name] : {std::pair{&q, "q"},
                                {&out, "out"},
                                {&k_cache, "k_cache"},
                                {&v_cache, "v_cache"},
                                {&kv_indices, "kv_indices"}})
    if (t->device != c.device)
      return Status::InvalidArgument(
          fmt::format("{}: on cuda:{}, but the wrapper is for cuda:{}", name, t->device, c.device));
  FLASHJIT_RETURN_IF_ERROR(CheckLse(lse, {q.shape[0], c.num_qo_heads}, c.device));
  if (s.batch == 0 && !c.cuda_graph) return Status::Ok();

  attention::DecodeParams p{};
  p.q = q.data;
  p.k = k_cache.data;
  p.v = v_cache.data;
  p.kv_indices = static_cast<const int32_t*>(kv_indices.data);
  p.out = out.data;
  p.lse = Present(lse) ? static_cast<float*>(lse.data) : nullptr;
  p.work = reinterpret_cast<const attention::DecodeWorkItem*>(s.workspace + s.off_work);
  p.num_work = reinterpret_cast<const int32_t*>(s.workspace);
  p.partial_lse = reinterpret_cast<float*>(s.workspace + s.off_plse);
  p.partial_o = reinterpret_cast<float*>(s.workspace + s.off_po);
  p.merge_items = reinterpret_cast<const attention::DecodeMergeItem*>(s.workspace + s.off_merge);
  p.merge_counters = reinterpret_cast<int32_t*>(s.workspace + s.off_count);
  p.claims = reinterpret_cast<unsigned long long*>(s.workspace + s.off_claims);
  if (s.persistent_ok) {
    p.persistent_ctas = reinterpret_cast<const int32_t*>(s.workspace) + 2;
    p.units = reinterpret_cast<const attention::DecodeUnit*>(s.workspace + s.off_units);
  }
  p.q_stride_b = q.strides[0];
  p.q_stride_h = q.strides[1];
  p.o_stride_b = out.strides[0];
  p.o_stride_h = out.strides[1];
  p.lse_stride_b = Present(lse) ? lse.strides[0] : 0;
  p.kv_page_stride = k_cache.strides[0];
  p.kv_token_stride = k_cache.strides[nhd ? 1 : 2];
  p.kv_head_stride = k_cache.strides[nhd ? 2 : 1];
  attention::SetDecodePageSize(p, static_cast<uint32_t>(c.page_size));
  p.num_qo_heads = c.num_qo_heads;
  p.num_kv_heads = c.num_kv_heads;
  p.group_size = c.num_qo_heads / c.num_kv_heads;
  p.q_tiles = s.q_tiles;
  p.cluster = c.cuda_graph ? s.graph_cluster : s.cluster;
  FillOptionParams(s.options, c.head_dim, &p);

  attention::DecodeMergeParams mp{};
  mp.partial_o = p.partial_o;
  mp.partial_lse = p.partial_lse;
  mp.items = reinterpret_cast<const attention::DecodeMergeItem*>(s.workspace + s.off_merge);
  mp.num_items = p.num_work + 3;  // header[3]: the merge kernel's items
  mp.out = p.out;
  mp.lse = p.lse;
  mp.sinks = p.sinks;
  mp.o_stride_b = p.o_stride_b;
  mp.o_stride_h = p.o_stride_h;
  mp.lse_stride_b = p.lse_stride_b;
  mp.num_qo_heads = p.num_qo_heads;
  const int grid = c.cuda_graph ? s.cap_items : s.n_items;
  // Split requests are merged by their cluster (p.cluster), their last CTA (p.merge_counters)
  // or, where the plan says so, the merge kernel. A persistent plan launches its CTAs only; in
  // graph mode (forced: every plan persistent) the captured grid is the resident capacity, and CTAs
  // beyond the current plan's count (read from the workspace) exit.
  const int persistent_grid =
      c.cuda_graph ? (s.persistent_ok ? s.limits.PersistentSlots() : 0) : s.persistent_ctas;
  // The merge launch: the plan's merge items when it takes the merge kernel; in graph mode, where
  // the wrapper has it, on every replay over max_batch_size items (beyond header[3]: exit).
  const int merge_grid =
      c.cuda_graph ? (s.graph_merge ? s.cap_merge : 0) : (s.merge_kernel ? s.n_merge : 0);
  return LaunchDecode(*s.kernel, s.spec, p, grid, mp, merge_grid, static_cast<CUstream>(stream),
                      persistent_grid, s.pdl, s.merge_pdl);
}

Status SplitKVCache(const TensorView& cache, TensorView* k_cache, TensorView* v_cache) {
  if (!k_cache || !v_cache) return Status::InvalidArgument("SplitKVCache: null output view");
  if (cache.ndim != 5 || cache.shape[1] != 2)
    return Status::InvalidArgument(fmt::format(
        "cache: {}; expected [num_pages, 2, page_size, num_kv_heads, head_dim] (NHD) or "
        "[num_pages, 2, num_kv_heads, page_size, head_dim] (HND)",
        cache.Describe()));
  for (int which = 0; which < 2; ++which) {
    TensorView t;
    t.dtype = cache.dtype;
    t.device = cache.device;
    t.ndim = 4;
    t.data = static_cast<char*>(cache.data) + which * cache.strides[1] * DTypeBytes(cache.dtype);
    t.shape[0] = cache.shape[0];
    t.strides[0] = cache.strides[0];
    for (int d = 1; d < 4; ++d) {
      t.shape[d] = cache.shape[d + 1];
      t.strides[d] = cache.strides[d + 1];
    }
    *(which == 0 ? k_cache : v_cache) = t;
  }
  return Status::Ok();
}

}  // namespace flashjit
