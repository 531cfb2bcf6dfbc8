// The split-KV schedule of a decode batch: which keys each CTA reads, and which partial
// results the merge kernel combines. Pure host code (tested on the CPU).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/decode_params.cuh"

namespace flashjit::ops {

struct DecodeRequest {
  int32_t page_begin = 0;  // offset of the first page id in kv_indices
  int32_t kv_len = 0;
  int32_t kv_start = 0;  // first key any query can see (sliding window), <= kv_len
};

// A request's first key any item reads: the window's first (window_left >= 0: kv_len - 1 -
// window_left, at least 0), else 0; rounded down to a page where the plan's kernel has its page
// size compiled in (fixed_page > 0: FixedPageTileLoader reads tiles from a page's start; the
// kernel masks the keys below the window).
int32_t DecodeFirstKey(int64_t kv_len, int32_t window_left, int fixed_page);

struct DecodeScheduleLimits {
  int ctas_per_item = 1;  // kv heads x query tiles: CTAs launched per work item
  int slots = 264;        // CTAs the GPU runs at once (SMs x CTAs per SM)
  // The persistent kernel's resident CTAs (its registers may hold fewer than `slots`); 0: slots.
  int persistent_slots = 0;
  int PersistentSlots() const { return persistent_slots > 0 ? persistent_slots : slots; }
  int max_items = 1 << 30;
  int sms = 132;  // multiprocessors
  // Time of a tile for a CTA alone on its SM (at most `sms` CTAs), relative to one that shares
  // its SM with the others `slots` allows. 1: no difference is modelled.
  double lone_tile_cost = 1.0;
  // Price a plan's last, partly filled wave by the CTAs its SMs hold: a last wave of r CTAs, at
  // most c = ceil(r / sms) on an SM of slots / sms, reads a tile in max(lone_tile_cost, c x sms /
  // slots) of a full wave's tile time (false: every wave costs a full one, and lone_tile_cost
  // applies only to plans of at most `sms` CTAs). Both agree on plans of one wave.
  bool price_last_wave = false;
  // The least the last CTA's merge of a split request costs, in tiles (FusedMergeCost).
  double fused_merge_floor = 2.0;
  // > 0: lone_tile_cost of plans the merge kernel follows (their attention launch keeps
  // programmatic dependent launch, whose waiting CTAs crowd lone ones: DecodePdlCrowds).
  double lone_tile_cost_merge_kernel = 0.0;
  // Merge of split requests in a thread-block cluster (sm_90+): the most chunks per request it
  // merges (0: never). It applies when every request of the batch has the same number
  // (min_cluster..max_cluster) of chunks; then the merge is priced at
  // cluster_merge_cost instead of the global merge's 2 tiles (partials, fence, counter, reads).
  // 0.5: B=16 L=1k on the H200 (16-bit KV, D 128) split in two with the cluster merge took
  // 23.8 us back to back against 24.5 unsplit (session 5), so a two-way split must win over
  // 16 lone tiles (8 + 1 + 0.5 < 16 * 0.55 + 1).
  int max_cluster = 0;
  // A graph-mode wrapper launches every replay in clusters of one size (DecodeGraphCluster), so
  // its plans cluster by exactly that many chunks: min_cluster = max_cluster.
  int min_cluster = 2;
  double cluster_merge_cost = 0.5;
  // Longest chunk (keys) a cluster merges: beyond it the merge is under 1 % of a CTA's time,
  // and the H200 measured B=16 L=16k / 32k (chunks of 8k / 16k, clusters of 2) at -1 % / -1 %
  // in one machine start and 0 % / +1.6 % in another (session 5), so they keep the global merge.
  int32_t cluster_max_chunk = 2048;
  // Clusters of more than 2 CTAs apply only to plans of at most this many CTAs. The H200 (132
  // SMs, 2 decode CTAs per SM at 16-bit D 128) holds 248 CTAs in clusters of 4 and 240 in
  // clusters of 8 at once (session 13's stamps: 256 CTAs ran as 248 / 240 + a second round), so
  // a plan of 256 CTAs in such clusters takes two rounds where the model counts one wave.
  int cluster_max_ctas = 1 << 30;
  // The last CTA's merge of a split request (DecodeEpilogue's FusedMerge: one warp per query
  // row, each reading its partials in batches of merge_batch, one L2 round trip each, plus two
  // passes over their LSEs, 32 at a time), in tiles: max(2, merge_round_trip x rows per warp x
  // (2 ceil(n / 32) - 1 + ceil(n / merge_batch))) for the request of the most (n) chunks.
  // merge_rows_per_warp 0: a flat 2 tiles (before session 13). Measured on the H200 (session 13,
  // 8 query rows per kv head, 2 per warp): the merge of 64 / 128 / 256 partials took 13 / 25 /
  // 45 us after the chunks' end, about 0.73 us per round trip, 0.38 of a tile (two CTAs of 16-bit
  // D 128 per SM: 32 KB a tile at 4.4 TB/s / 132 SMs / 2 = 1.9 us).
  int merge_rows_per_warp = 0;
  int merge_batch = 16;
  double merge_round_trip = 0.38;
  // The merge kernel (a CTA per request, query head and 32 columns, launched after the attention
  // kernel with PDL; in graph mode only where the wrapper launches it on every replay), in tiles:
  // merge_kernel_base for up to merge_kernel_partials partials a request, plus merge_kernel_trip
  // for each further round trip of as many. It is an option only for plans of one wave whose
  // requests split into at least merge_kernel_min_partials chunks; 0 base: never. Where it applies,
  // the cheaper merge is modelled and taken (DecodeMergeCost). Measured on the H200 (session 15,
  // bf16 and fp8, 11 configurations): the merge kernel added about 2.1 us (1.1 tiles) to one kv
  // head's B=1 L=16k plan of 32 chunks, and cut 4-43 % from plans of one wave and 8-128 chunks a
  // request; it lost 1.7-3.8 % where the last CTAs merge 2-3 partials each or overlap later waves
  // (fp8 B=64 L=4k: 4 waves; 32 kv heads x 8 query heads at B=64 L=16k: 2 chunks a request).
  double merge_kernel_base = 0.0;
  double merge_kernel_trip = 0.5;
  int merge_kernel_partials = 128;
  int merge_kernel_min_partials = 8;
  // Tail pieces (CutDecodeTail): in a plan of at most tail_max_waves waves whose wave reads at
  // least tail_min_tiles tiles a slot (tail_min_wave_tiles in plans of more than one wave), items
  // longer than (1 - tail_fraction) of a wave's share keep that much and give the rest as pieces
  // of about tail_piece tiles (0: a 32nd of a slot's share), launched after every other item, for
  // the slots that finish first; in a plan of one wave, an item that is its request's only one
  // only from tail_min_whole_tiles a slot. 0: off.
  double tail_fraction = 0.0;
  int tail_piece = 0;
  int tail_min_tiles = 96;
  int tail_min_wave_tiles = 192;
  int tail_min_whole_tiles = 384;
  int tail_max_waves = 1;
};

// The modelled merge of split requests of at most n chunks without a cluster, in a plan of
// `waves` waves of CTAs, in tiles: the last CTA's (the rows x round trips model above) or the
// merge kernel's where it applies, whichever is cheaper; *kernel says which.
double DecodeMergeCost(int64_t n, int64_t waves, const DecodeScheduleLimits& limits,
                       bool* kernel = nullptr);

struct DecodeSchedule {
  int32_t chunk = 0;                            // keys per work item at most
  std::vector<attention::DecodeWorkItem> work;  // longest first
  std::vector<attention::DecodeMergeItem> merge;
  int32_t num_partials = 0;
  // > 1: every request has exactly `cluster` items, in request order (items b * cluster ..
  // b * cluster + cluster - 1), merged by their thread-block cluster: no merge items, no
  // partial slots. 0: split requests (if any) are merged through the partial buffers.
  int32_t cluster = 0;
};

// Keys per work item (a multiple of 64) that minimises the modelled time: waves of CTAs times
// the tiles each reads (DecodeScheduleLimits::lone_tile_cost, price_last_wave) plus a fixed cost
// per CTA, plus the merge when anything splits (cheaper when a cluster can merge it, see
// DecodeScheduleLimits::max_cluster). Never more than limits.max_items work items.
int32_t ChooseDecodeChunk(std::span<const DecodeRequest> requests,
                          const DecodeScheduleLimits& limits);

// Tail pieces. A plan whose CTAs do not fill its last wave leaves SMs with one CTA or none, and
// an SM reads less with one CTA than with two (session 22: 248 / 256 / 264 equal CTAs read 4.375
// / 4.436 / 4.487 TB/s); the CTAs of a wave also end over about a tenth of their time (session
// 12). With a slot's share P = (tiles of all the plan's CTAs) / slots and W = ceil(CTAs / slots)
// waves, an item of more than B = max(1, floor((1 - tail_fraction) x P / W)) tiles keeps its
// first B tiles, and its other tiles become pieces of about p tiles (limits.tail_piece, 0: P / 32,
// at least 1), each a work item of its own. The pieces follow every other item (the GPU starts
// CTAs in about launch order), so the block scheduler hands them to the slots that would idle.
// A request's items (kept parts and pieces) take consecutive partial slots and one merge item,
// so the merge reads them in the same order on every run: the output's bits depend on the plan
// only. Applies where limits.tail_fraction > 0, the plan is not merged by clusters, W <=
// limits.tail_max_waves and P / W >= limits.tail_min_tiles (tail_min_wave_tiles where W > 1); in
// a plan of one wave, an item that is its request's only one (cutting it adds a partial write and
// a merge) is cut only where P >= limits.tail_min_whole_tiles (session 23: cut whole requests at
// P = 124 read up to 2.6 % slower; at 248, -0.7 to +0.7 % for 16-bit caches).
// Pieces grow until the plan holds at most limits.max_items items (at the default 3 %, the
// benchmark's plans take one or two pieces an item, within the four waves of items the workspace
// holds beyond one a request). Returns the number of pieces made.
int CutDecodeTail(DecodeSchedule& schedule, const DecodeScheduleLimits& limits);

// Tests: plans made afterwards take chunks of `keys` (rounded up to a tile) where the workspace
// has room for the items they make, as the tuning knob FLASHJIT_DECODE_CHUNK does; keys <= 0
// restores the knob.
void SetDecodeChunkForTesting(int64_t keys);

DecodeSchedule BuildDecodeSchedule(const std::vector<DecodeRequest>& requests,
                                   const DecodeScheduleLimits& limits);

// A persistent plan: `ctas` CTAs, each walking a list of (work item, head tile) units.
// units[0 .. ctas) are the CTAs' first units (head_tile -1: none), the rest follow; `next`
// links each unit to the next of the same CTA (-1 at the end). Every (item, head tile) of `work`
// appears exactly once.
struct DecodePersistentPlan {
  int32_t ctas = 0;
  std::vector<attention::DecodeUnit> units;
  std::vector<double> load;  // modelled time of each CTA's list, in tiles (for tests)
};

// Assigns the units of `work` (items x ctas_per_item head tiles, item-major; the schedule's
// items are longest first) to min(ctas, units) CTAs, longest first, each to the CTA whose list
// is shortest so far (ties: the lowest CTA), a unit of t tiles costing t + 1 (the fixed cost of
// a unit, as in ChooseDecodeChunk). Deterministic.
DecodePersistentPlan AssignDecodeUnits(const std::vector<attention::DecodeWorkItem>& work,
                                       int ctas_per_item, int ctas);

// Whether the default (FLASHJIT_DECODE_PERSISTENT unset) runs a plan on the persistent grid:
// more units than `slots` resident CTAs but at most two per CTA, none longer than 32 tiles (2048
// keys). Measured on the H200 (session 6, bf16 32/8 heads, D 128, b2b): B=64 L=1k (512 units of
// 16 tiles, 264 slots) -2.1 %; B=64 L=4k (64 tiles) -0.2 %, L=16k/32k +0.4/+0.5 %; B=256 (7.8
// units per CTA) +0.4 % at L=1k, +1.5 to +2.7 % at L=4k..32k: the saving at a unit boundary is
// fixed, while the static lists' imbalance (no dynamic balancing between SMs) grows with the
// work per CTA.
bool DefaultPersistent(int64_t units, int64_t longest_unit_tiles, int slots);

// Pair stealing (DecodeSteal, kernel variants with kSteal): marks each two neighbouring chunks
// (partial slots first + 2j, first + 2j + 1) of the split requests of `schedule` (merged by their
// last CTA, not by a cluster) whose chunks have at least min_own + 1 tiles each: the front item's
// range grows by d = min(front tiles, back tiles) / 8 tiles (at least 1) past the boundary, the
// back item's by d before it, and pad_ = role | 2d << 2 (attention::kDecodeStealFront / Back).
// Each side keeps at least min_own tiles outside the region (the kernel needs more than its
// pipeline's depth: stages + 2), and the region never holds a request's last (possibly partial)
// tile; pairs whose shorter chunk has fewer than min_tiles tiles stay plain. Returns the number
// of pairs marked.
int MarkDecodeStealPairs(DecodeSchedule& schedule, int min_own, int min_tiles = 0);

// Work items a plan may produce for up to `max_batch` requests (the workspace capacity): one
// per request and `extra_waves` waves of split items beyond.
int32_t DecodeMaxItems(int32_t max_batch, const DecodeScheduleLimits& limits, int extra_waves = 4);

// The uniform split of SingleDecode (one request of kv_len keys, no plan): `chunks` items of
// `chunk` keys (ChooseDecodeChunk over limits, whose max_items is the workspace's partial slots;
// under 2: no split). cluster > 1 (== chunks): the rule BuildDecodeSchedule uses (every request
// 2..limits.max_cluster chunks of at most limits.cluster_max_chunk keys) holds, and the chunks of
// each head tile are merged by their thread-block cluster: no partials, no merge launch.
struct SingleDecodeSplit {
  int32_t chunk = 0;
  int32_t chunks = 1;
  int32_t cluster = 0;
};
SingleDecodeSplit ChooseSingleDecodeSplit(int64_t kv_len, const DecodeScheduleLimits& limits);

}  // namespace flashjit::ops
