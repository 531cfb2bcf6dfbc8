// Pieces shared by single and batch decode: option checks, Params from options, launches.
#pragma once

#include <cuda.h>
#include <flashjit/decode.h>

#include "attention/decode_params.cuh"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/kernel.h"

namespace flashjit::ops {

// q/out dtype, KV dtype and head dim are supported together.
Status CheckDecodeDTypes(DType q_dtype, DType kv_dtype, int64_t head_dim);
// Scales finite and positive, soft cap >= 0, window >= -1, RoPE parameters, sinks f32 [Hq] on
// `device`.
Status CheckDecodeOptions(const DecodeOptions& o, int64_t num_qo_heads, int device);
// A KV tensor's data and every stride but the innermost allow 16-byte accesses.
Status CheckKVAlignment(const TensorView& t, const char* name);
// A K or V cache's strides (of dims longer than 1) are >= 0 and under 2^32 bytes: the kernels'
// loader forms offsets by 32 x 32 -> 64-bit multiplies.
Status CheckKVStrides(const TensorView& t, const char* name);
// An optional f32 lse with `shape` (1 or 2 dims), contiguous rows.
Status CheckLse(const TensorView& lse, std::initializer_list<int64_t> shape, int device);
inline bool Present(const TensorView& t) { return t.data != nullptr || t.ndim != 0; }

// The spec for these options.
DecodeSpec DecodeSpecFor(DType q_dtype, DType kv_dtype, int head_dim, const DecodeOptions& o);

// Runtime fields of the Params from the options (scales, cap, window, RoPE, sinks).
void FillOptionParams(const DecodeOptions& o, int head_dim, attention::DecodeParams* p);

// The plan model of batch decode. Knob FLASHJIT_DECODE_PLAN_MODEL: s12 = the cost model before
// session 13 (the last CTA's merge a flat 2 tiles, clusters of any size up to the slots); s13 =
// before session 18 (fp8 priced as 16-bit); s18a = fp8's last wave priced (BatchDecodeLimits),
// PDL by the keys of the longest item only; unset (or anything else) = kPlanModelS18: s18a, and
// no PDL for the fp8 launches of DecodePdlCrowds.
enum DecodePlanModels {
  kPlanModelS12 = 0,
  kPlanModelS13 = 1,
  kPlanModelS18A = 2,
  kPlanModelS18 = 3
};
int DecodePlanModel();

// The registers a thread that the decode attention entry (or, `persistent`, the persistent entry)
// holds at most over the variants of one head dim and KV element size (soft cap, ALiBi, fast
// index; RoPE where `rope`; NVRTC 13.0, sm_90a). The unit case "decode plans: the resident CTAs
// an SM match the compiled kernels" compiles them and fails when a kernel change moves a count
// below.
int DecodeKernelRegisters(int head_dim, int kv_bytes, bool persistent = false, bool rope = false);
// The decode CTAs (128 threads) one SM holds, as plans count them (DecodeScheduleLimits::slots /
// sms): from DecodeKernelRegisters and the default pipeline's shared memory, with RoPE's where
// `rope` (fp8 caches turn K in registers up to D 128, which takes more of them, and in shared
// memory at D 256). On an H200: 4 at D 64 (by shared memory), 2 at D 128 (3 with fp8, 2 with
// fp8 and RoPE), 1 at D 256 (2 with fp8: its 74 KB and 255 registers fit twice; with RoPE too
// since session 25, when only K's rows went through shared memory). Tuning knob
// FLASHJIT_DECODE_CTAS_PER_SM (1..8) counts that many at every head dim and KV dtype instead.
int DecodeCtasPerSm(int head_dim, int kv_bytes, bool rope = false);
// The persistent kernel's resident CTAs per SM (16-bit KV: 3 at D 64, 2 at D 128, 1 at D 256; at
// most DecodeCtasPerSm).
int DecodePersistentCtasPerSm(int head_dim, int kv_bytes);

// The schedule limits of a batch decode wrapper of config `c` on a GPU of `sms` multiprocessors
// (BatchDecode::Create's; also what bench_decode --plan prints), for plans whose options take
// RoPE where `rope` (DecodeCtasPerSm).
DecodeScheduleLimits BatchDecodeLimits(const Engine& engine, const BatchDecodeConfig& c, int sms,
                                       bool rope = false);

// The work items a wrapper of config `c` plans at most (its workspace's capacity, and in graph
// mode the items every replay launches): DecodeMaxItems with four waves of split items beyond
// the batch, one in graph mode where max_batch_size requests fit one wave unsplit.
int32_t BatchDecodeMaxItems(const BatchDecodeConfig& c, const DecodeScheduleLimits& limits);

// Whether decode CTAs are launched head-major (see DecodeParams::head_major).
bool DecodeHeadMajor();

// The most chunks per request that plans on `device` merge in a thread-block cluster
// (DecodeScheduleLimits::max_cluster): 8 on an sm_90+ arch for 16-bit KV at head_dim 128, the
// case measured faster on the H200; 0 elsewhere. Tuning knob FLASHJIT_DECODE_CLUSTER: 0 = never,
// all = every KV dtype and head dim. FLASHJIT_DECODE_MAX_CLUSTER=N (2..16) replaces the 8: sizes
// over 8 are non-portable cluster shapes (sm_90 allows 16; the loader sets every function's
// CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED), session 9's A/B.
int DecodeMaxCluster(const Engine& engine, int device, int head_dim, int kv_bytes);
// Tests: wrappers created afterwards merge up to `n` chunks in a cluster where clusters apply
// (n <= 0 restores the knob / the default).
void SetDecodeMaxClusterForTesting(int n);

// Which plans of a 16-bit KV cache run on a persistent grid (DecodeParams::units). Tuning knob
// FLASHJIT_DECODE_PERSISTENT: 0 = never, 1 = every plan that does not cluster (for A/B and
// tests); unset = kPersistentAuto (see BatchDecode::Plan).
enum DecodePersistentMode { kPersistentNever = 0, kPersistentAlways = 1, kPersistentAuto = 2 };
DecodePersistentMode DecodePersistent();

// Whether a wrapper of config `c` may take the persistent grid under `mode` (16-bit KV; head dim
// 256 and graph mode only when forced): BatchDecode::Create sizes the units' workspace by it.
bool DecodePersistentAllowed(const BatchDecodeConfig& c, DecodePersistentMode mode);

// Whether a graph-mode wrapper of config `c` launches the merge kernel on every replay (so that
// its plans may take it): only for groups of at least 4 query heads and where every batch it
// plans (max_batch_size requests) fits the merge kernel's one-wave rule, limits.slots /
// (merge_kernel_min_partials x ctas_per_item) requests; never under FLASHJIT_DECODE_MERGE=fused.
bool DecodeGraphMergeKernel(const BatchDecodeConfig& c, const DecodeScheduleLimits& limits);

// The cluster size of a graph-mode wrapper's launches (0: none): every replay runs in clusters
// of that many CTAs, and plans whose requests all split into exactly that many chunks merge them
// in the cluster (DecodeScheduleLimits::min_cluster); the others run unmerged by it. Where
// clusters apply (DecodeMaxCluster) and no persistent grid is forced. By default 2, where
// max_batch_size requests in two chunks fit the slots but in merge_kernel_min_partials chunks do
// not (the merge kernel's small batches keep unclustered launches). With
// DecodeGraphClusterMax() over 2: the largest of 8, 4, 2 (at most that) for which max_batch_size
// requests in that many chunks fit one round of the slots (over 2: 10/11 of them, what the H200
// holds in clusters of 4 and 8).
int DecodeGraphCluster(const Engine& engine, const BatchDecodeConfig& c,
                       const DecodeScheduleLimits& limits);
// The largest cluster graph mode may take. Knob FLASHJIT_DECODE_GRAPH_CLUSTER = 0 (none; graph
// mode merges through the workspace, as before session 16), 2, 4, 8; unset: 2 (clusters of 4
// and 8 hold 10/11 of the slots in every plan of the wrapper, and take the merge kernel's room).
int DecodeGraphClusterMax();
// Tests: wrappers created afterwards use `max` (0: none); < 0 restores the knob.
void SetDecodeGraphClusterForTesting(int max);

// How a plan's split requests are merged when no cluster does it: by the last CTA of each
// (request, head tile) (kMergeFused: no second launch), or by the merge kernel (kMergeKernel: a
// CTA per request, query head and 32 columns, spread over many SMs; launched with PDL; in graph
// mode only where DecodeGraphMergeKernel). Knob
// FLASHJIT_DECODE_MERGE=fused / kernel; unset = kMergeAuto: the cheaper in the plan model
// (ops::DecodeMergeCost).
enum DecodeMergeMode { kMergeFused = 0, kMergeKernel = 1, kMergeAuto = 2 };
DecodeMergeMode DecodeMerge();
// Tests: plans made afterwards use `mode`; < 0 restores the knob.
void SetDecodeMergeForTesting(int mode);

// The plan header at the start of a batch decode workspace (BatchDecode::Plan writes it; the
// work items follow it): int32 words [work items, merge items, persistent CTAs, the merge
// kernel's items, the plan's cluster size, 3 unused]. The kernels read words 0, 2 and 3
// (DecodeParams::num_work, persistent_ctas; DecodeMergeParams::num_items).
inline constexpr size_t kDecodePlanHeaderBytes = 32;

// The kernel form of a plan (BatchDecode::Plan's rules; also what bench_decode --plan prints).
struct DecodePlanForm {
  int64_t units = 0;          // (work item, head tile) pairs
  int64_t longest = 0;        // keys of the longest work item
  int64_t longest_tiles = 0;  // its tiles
  bool persistent = false;    // resident CTAs walk lists of units
  bool fast_index = false;    // the CTA index from the launch's divisors (DecodeFastIndexMode)
  bool merge_kernel = false;  // split requests merged by the merge kernel (DecodeMergeMode)
};
DecodePlanForm ChooseDecodePlanForm(const BatchDecodeConfig& c, DecodePersistentMode mode,
                                    const DecodeSchedule& sched,
                                    const DecodeScheduleLimits& limits);

// Programmatic dependent launch for the attention launch of a plan of form `form` (what
// BatchDecode::Plan decides and bench_decode --plan prints): DecodePdl by the plan's longest
// item, left off where DecodePdlCrowds says its waiting successors would crowd it.
bool DecodePlanPdl(const Engine& engine, const BatchDecodeConfig& c,
                   const DecodeScheduleLimits& limits, const DecodePlanForm& form);

// The most CTAs a persistent plan uses (0: the resident capacity, SMs x CTAs per SM).
int DecodePersistentMaxCtas();
// Tests: wrappers created and plans made afterwards use `mode` and at most `max_ctas` persistent
// CTAs (0: no limit); mode < 0 restores the knob and the resident capacity.
void SetDecodePersistentForTesting(int mode, int max_ctas);

// Tail pieces of batch plans (ops::CutDecodeTail, sessions 22-23), outside graph mode. A plan
// knob, declared here and not beside the variant spec: decode_spec.h joins every kernel's cache
// key. Knob FLASHJIT_DECODE_TAIL = "percent", "percent,piece" or "percent,piece,waves": the
// tail_fraction in percent (0: off, up to 50), the piece in tiles (0 or absent: a 32nd of a
// slot's share) and the most waves a plan may have (absent: 1); unset (or anything else): 3 %,
// pieces of a 32nd of a slot's share, plans of up to two waves. Either way, for every KV dtype:
// plans of one wave that reads at least 96 tiles a slot (an item that is its request's only one
// from 384 tiles, 192 for fp8 caches; 192 for pages of under 16 keys) or of two whose wave reads
// at least 192, and never plans of one CTA an SM (D 256). Measured on the H200, queued us, off ->
// 3 %:
// - session 22 (bf16 32/8 heads, D 128, page 16, two rounds a form): one wave, B=16 L=32k 490.2
//   -> 485.6, B=32 L=32k 968.7 -> 959.8, B=8 L=32k 251.6 -> 249.9, B=16 L=16k 250.9 -> 249.6;
//   7-15 % and pieces of 2-4 tiles lost up to 1.7 %. Two waves, B=64 L=32k 1923.6 -> 1904.7,
//   B=56 L=32k 1701.7 -> 1669.6, B=64 L=16k 964.0 -> 961.3; but B=64 L=8k (124 tiles a wave) +0.6
//   % and L=4k (62) +2.5 %, hence 192 tiles a wave there.
// - session 23 (10 configurations x 4-256 requests x 8k-32k keys, three rounds a form; calls 3-5
//   in docs/perf/decode.md): whole (unsplit) requests of one-wave plans cut at 124 tiles a slot
//   read +0.3 to +2.6 % (bf16 base B=32 L=8k +1.3 %, qwen7b B=64 L=8k +2.6 %) and -1.3 to +2.1 %
//   for fp8 (B=48 L=8k +1.5 %); at 248, -0.7 to +0.7 % (16-bit) and -2.1 to -0.1 % (fp8); at 496,
//   -1.5 to -0.2 % and -2.9 to -1.1 %. Split requests at 124: -0.9 to +1.2 % and -3.2 to +0.8 %.
//   gemma2 (D 256, one CTA an SM) lost 0.6-2.7 % (bf16) and 27-28 % (fp8) at every shape cut. Page
//   1 (a page id a key) lost at 124 tiles a slot in calls 4 and 5 (B=8 L=32k +1.2 / +1.6 %, fp8
//   B=24 L=16k +0.8 / +0.5 %) and won from 248 in plans of one wave (fp8 B=24 L=32k -1.5 / -1.3 %)
//   and of two (B=64 L=32k -1.2 / -1.0 %); page sizes 2-8 were not measured.
struct DecodeTailKnob {
  double fraction = 0.03;
  int piece = 0;
  int min_tiles = 96;             // DecodeScheduleLimits::tail_min_tiles
  int min_wave_tiles = 192;       // DecodeScheduleLimits::tail_min_wave_tiles
  int min_whole_tiles = 384;      // DecodeScheduleLimits::tail_min_whole_tiles, 16-bit caches
  int min_whole_tiles_fp8 = 192;  // and fp8 caches
  // tail_min_tiles for pages of under 16 keys, and at head dim 256 (two fp8 CTAs an SM, session
  // 24: one-wave plans of 128 tiles a slot lost 1.1-1.9 %, of 256 won 0.6 %)
  int min_tiles_strict = 192;
  int max_waves = 2;        // DecodeScheduleLimits::tail_max_waves
  bool lone_slots = false;  // also plans of one CTA an SM
};
DecodeTailKnob DecodeTail();
// Tests: plans of wrappers created from now on cut tails of `percent` (0: off) with pieces of
// `piece` tiles, in plans of up to `max_waves` waves whose wave reads at least `min_tiles` tiles a
// slot (whole requests too; plans of more than one wave: 2 x min_tiles, as min_wave_tiles is by
// default; 0: any), plans of one CTA an SM included; percent < 0 restores the knob.
void SetDecodeTailForTesting(int percent, int piece, int min_tiles = 96, int max_waves = 1);

// Whether a decode attention launch uses programmatic dependent launch (sm_90+, PDL: the
// kernel's prologue up to its griddepcontrol.wait, and its block scheduling, overlap the previous
// kernel's tail; it pays back to back and in CUDA graphs). Default (knob FLASHJIT_DECODE_PDL
// unset): on for sm_90+ launches whose longest work item has at most kDecodePdlMaxKeys keys.
// Measured on the H200 (session 9, bf16 32/8 heads, D 128, b2b): -1.1 to -2.6 us per call on
// every such shape (B=1 L=1k..32k (chunks <= 1024), B=16/64/256 L=1k/4k, fp8, single decode),
// synced unchanged; on longer items the saving is under 0.3 % and the one-wave plans of B=16
// L=16k/32k lost 1.0-1.4 %. FLASHJIT_DECODE_PDL=1: every sm_90+ launch; 0: none; unset: the
// engine-wide rule (ops::UsePdl: FLASHJIT_PDL=0/1 forces every family off/on, else this
// default). The merge kernel takes it wherever the rule allows PDL at all (DecodePdl(.., 0)).
// crowded: the launch is one whose waiting successors would crowd its own CTAs
// (DecodePdlCrowds); the default rule then leaves PDL off.
inline constexpr int64_t kDecodePdlMaxKeys = 4096;
bool DecodePdl(const Engine& engine, int device, int64_t longest_keys, bool crowded = false);
// Whether a batch decode launch of `ctas` CTAs of at most `tiles` tiles each would be slowed by
// the CTAs that programmatic dependent launch places beside it. With PDL the next launch's CTAs
// start as soon as this launch's CTAs have started, take the SMs' free slots and wait there for
// its end. Measured on the H200 (session 18, calls 4-5: fp8 e4m3, D 128, 3 CTAs an SM, queued
// unchanged): where this launch leaves a slot free on most SMs (more than sms / 2 CTAs, at most
// slots - sms) and its CTAs read 4 tiles or more, the waiting CTAs cost it 6-36 % back to back:
// B=16 L=512 (128 CTAs of 8 tiles) 18.53 us with PDL, 14.59 without; tp8 B=256 L=2k (256 of
// 32) 57.67 against 47.78; 256 CTAs of 64 tiles 104.96 against 83.64. With 1-2 tiles a CTA PDL
// still gains (B=1, 128-256 CTAs: 1.3-2.0 us), as it does where every slot is taken (384 CTAs
// of 6 tiles: 22.18 against 23.41) or fewer than sms / 2 CTAs leave whole SMs free (64 CTAs of
// 8 tiles: level). So: fp8 caches at D 128 outside graph mode, plans without the merge kernel
// (its own launch was not measured apart), and those bounds. 16-bit caches keep PDL: on 8 bf16
// plans of that kind it gained 0.9-1.8 us back to back at 512-1k keys, level at 2k (call 7;
// their kernel waits on memory, fp8's on instruction issue).
bool DecodePdlCrowds(const BatchDecodeConfig& c, const DecodeScheduleLimits& limits, int64_t ctas,
                     int64_t tiles, bool merge_kernel);
// Tests: 1 / 0 force PDL on / off for launches from now on; < 0 restores the knob.
void SetDecodePdlForTesting(int mode);

// Launches the attention kernel over `grid_items` work items and, when `merge_items` > 0, the
// merge kernel; or (persistent_ctas > 0) the persistent kernel on that many CTAs, nothing else.
// pdl: the attention launch takes programmatic dependent launch (see DecodePdl); merge_pdl: the
// merge launch does (it then starts under the attention kernel's tail).
// p.cluster > 1: clusters of p.cluster CTAs in the order DecodeParams describes.
Status LaunchDecode(const runtime::Kernel& kernel, const DecodeSpec& spec,
                    const attention::DecodeParams& p, int grid_items,
                    const attention::DecodeMergeParams& mp, int merge_items, CUstream stream,
                    int persistent_ctas = 0, bool pdl = false, bool merge_pdl = false);

}  // namespace flashjit::ops
