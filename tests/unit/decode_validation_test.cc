// Decode argument checks (every bad argument is InvalidArgument before any launch) and the
// split-KV schedule, on the CPU with a dry-run engine.
#include <flashjit/decode.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <tuple>

#include "src/codegen/render.h"
#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"

namespace flashjit {
namespace {

std::shared_ptr<Engine> DryEngine() {
  EngineOptions o;
  o.dry_run = true;
  o.arch = "sm_90a";
  o.disable_cache = true;
  o.read_environment = false;
  auto e = Engine::Create(o);
  REQUIRE(e.ok());
  return *e;
}

void* Fake(uintptr_t offset = 0) { return reinterpret_cast<void*>(0x100000 + offset); }

void ExpectInvalid(const Status& s, const std::string& needle) {
  INFO(s.ToString());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find(needle) != std::string::npos);
}

TEST_CASE("single decode rejects bad arguments before launch", "[decode]") {
  auto engine = DryEngine();
  const TensorView q = TensorView::Contiguous(Fake(), DType::kBF16, {32, 128});
  const TensorView k = TensorView::Contiguous(Fake(1 << 20), DType::kBF16, {100, 8, 128});
  const TensorView out = TensorView::Contiguous(Fake(2 << 20), DType::kBF16, {32, 128});
  ExpectInvalid(
      SingleDecode(*engine, TensorView::Contiguous(Fake(), DType::kF32, {32, 128}), k, k, out),
      "q: dtype");
  ExpectInvalid(SingleDecode(*engine, q, TensorView::Contiguous(Fake(), DType::kF16, {100, 8, 128}),
                             TensorView::Contiguous(Fake(), DType::kF16, {100, 8, 128}), out),
                "kv: dtype");
  ExpectInvalid(SingleDecode(*engine, TensorView::Contiguous(Fake(), DType::kBF16, {32, 96}),
                             TensorView::Contiguous(Fake(), DType::kBF16, {100, 8, 96}),
                             TensorView::Contiguous(Fake(), DType::kBF16, {100, 8, 96}),
                             TensorView::Contiguous(Fake(), DType::kBF16, {32, 96})),
                "head_dim: 96");
  ExpectInvalid(
      SingleDecode(*engine, q, TensorView::Contiguous(Fake(), DType::kBF16, {100, 7, 128}),
                   TensorView::Contiguous(Fake(), DType::kBF16, {100, 7, 128}), out),
      "not a multiple");
  // HND reading an NHD tensor: 100 "heads" do not divide 32 query heads.
  ExpectInvalid(SingleDecode(*engine, q, k, k, out, {}, KVLayout::kHND), "not a multiple");
  ExpectInvalid(
      SingleDecode(*engine, q, k, k, TensorView::Contiguous(Fake(), DType::kBF16, {31, 128})),
      "out: shape");
  ExpectInvalid(
      SingleDecode(*engine, q, k, k, out, TensorView::Contiguous(Fake(), DType::kF32, {31})),
      "lse");
  TensorView misaligned = k;
  misaligned.data = Fake(2);
  ExpectInvalid(SingleDecode(*engine, q, misaligned, misaligned, out), "16-byte aligned");
  // The loader's offsets are 32 x 32 -> 64-bit products: K/V strides >= 0 and under 2^32 bytes.
  TensorView reversed = k;
  reversed.strides[0] = -1024;
  ExpectInvalid(SingleDecode(*engine, q, reversed, reversed, out), "k: stride -1024 of dim 0");
  TensorView wide = k;
  wide.strides[0] = int64_t{1} << 31;  // 2^32 bytes of bf16
  ExpectInvalid(SingleDecode(*engine, q, wide, wide, out), "under 2^32 bytes");
  wide.strides[0] = (int64_t{1} << 31) - 8;  // the largest 16-byte multiple below: accepted
  CHECK(ops::CheckKVStrides(wide, "k").ok());
  TensorView other_device = k;
  other_device.device = 1;
  ExpectInvalid(SingleDecode(*engine, q, other_device, other_device, out), "cuda:1");
  DecodeOptions bad;
  bad.window_left = -5;
  ExpectInvalid(SingleDecode(*engine, q, k, k, out, {}, KVLayout::kNHD, bad), "window_left");
  bad = {};
  bad.v_scale = 0.f;
  ExpectInvalid(SingleDecode(*engine, q, k, k, out, {}, KVLayout::kNHD, bad), "v_scale");
  bad = {};
  bad.sinks = TensorView::Contiguous(Fake(), DType::kF32, {31});
  ExpectInvalid(SingleDecode(*engine, q, k, k, out, {}, KVLayout::kNHD, bad), "sinks");
  CHECK(engine->stats().compiles == 0);
}

TEST_CASE("batch decode rejects bad page tables, workspaces and tensors", "[decode]") {
  auto engine = DryEngine();
  BatchDecodeConfig cfg;
  cfg.num_qo_heads = 32;
  cfg.num_kv_heads = 8;
  cfg.max_batch_size = 4;
  BatchDecodeConfig bad_cfg = cfg;
  bad_cfg.head_dim = 96;
  ExpectInvalid(BatchDecode::Create(*engine, bad_cfg).status(), "head_dim: 96");
  bad_cfg = cfg;
  bad_cfg.num_kv_heads = 5;
  ExpectInvalid(BatchDecode::Create(*engine, bad_cfg).status(), "num_kv_heads");
  auto w = BatchDecode::Create(*engine, cfg);
  REQUIRE(w.ok());
  const size_t ws = (*w)->WorkspaceBytes();
  CHECK(ws > 0);
  std::vector<int32_t> indptr = {0, 2, 3}, last = {16, 5}, indices = {4, 1, 2};
  ExpectInvalid((*w)->Plan(indptr.data(), last.data(), 2, {}, Fake(), ws - 1), "workspace");
  ExpectInvalid((*w)->Plan(indptr.data(), last.data(), 5, {}, Fake(), ws), "max_batch_size");
  std::vector<int32_t> bad_indptr = {0, 3, 2};
  ExpectInvalid((*w)->Plan(bad_indptr.data(), last.data(), 2, {}, Fake(), ws), "decreases");
  std::vector<int32_t> bad_last = {17, 5};
  ExpectInvalid((*w)->Plan(indptr.data(), bad_last.data(), 2, {}, Fake(), ws), "kv_last_page_len");
  std::vector<int32_t> bad_indices = {4, 9, 2};
  ExpectInvalid(
      (*w)->Plan(indptr.data(), last.data(), 2, {}, Fake(), ws, nullptr, bad_indices.data(), 8),
      "kv_indices[1]");
  ExpectInvalid(
      (*w)->Run(TensorView::Contiguous(Fake(), DType::kBF16, {2, 32, 128}), {}, {}, {}, {}),
      "Plan() first");
  CHECK(engine->stats().compiles == 0);
}

TEST_CASE("decode schedule splits long requests to fill the GPU", "[decode]") {
  ops::DecodeScheduleLimits limits;
  limits.ctas_per_item = 8;
  limits.slots = 264;
  limits.max_items = ops::DecodeMaxItems(256, limits);
  // One long request: split into about one wave of CTAs.
  auto one = ops::BuildDecodeSchedule({{0, 32768, 0}}, limits);
  CHECK(one.work.size() * 8 >= 132);
  CHECK(one.work.size() * 8 <= 264);
  CHECK(one.merge.size() == 1);
  // Every key is covered exactly once, in order, by chunks of at most `chunk` keys.
  int covered = 0;
  std::vector<std::pair<int, int>> ranges;
  for (const auto& w : one.work) ranges.push_back({w.kv_start, w.kv_end});
  std::sort(ranges.begin(), ranges.end());
  for (auto [a, b] : ranges) {
    CHECK(a == covered);
    CHECK(b - a <= one.chunk);
    covered = b;
  }
  CHECK(covered == 32768);
  // A full batch of long requests needs no split.
  std::vector<ops::DecodeRequest> full(64, {0, 4096, 0});
  auto f = ops::BuildDecodeSchedule(full, limits);
  CHECK(f.merge.empty());
  CHECK(f.work.size() == 64);
  // Empty requests still get an item (it writes zeros and -inf).
  auto e = ops::BuildDecodeSchedule({{0, 0, 0}, {0, 5, 0}}, limits);
  CHECK(e.work.size() == 2);
  // 16 requests of 1024 keys: 128 CTAs unsplit, one per SM. Without a lone-CTA speed the model
  // splits them in two (256 CTAs, one wave); a lone CTA at 0.55 of the shared tile time makes
  // the unsplit batch cheaper (16 * 0.55 + 1 < 8 + 1 + 2), while 4096 keys still split.
  std::vector<ops::DecodeRequest> short16(16, {0, 1024, 0});
  CHECK(ops::ChooseDecodeChunk(short16, limits) == 512);
  limits.lone_tile_cost = 0.55;
  CHECK(ops::ChooseDecodeChunk(short16, limits) == 1024);
  std::vector<ops::DecodeRequest> mid16(16, {0, 4096, 0});
  CHECK(ops::ChooseDecodeChunk(mid16, limits) == 2048);
  CHECK(ops::BuildDecodeSchedule(mid16, limits).cluster == 0);
}

// Session 18: the last, partly filled wave priced by the CTAs it puts on an SM
// (DecodeScheduleLimits::price_last_wave), with fp8's limits at D 128 (3 CTAs an SM).
TEST_CASE("decode schedule prices a partly filled last wave by its CTAs an SM", "[decode]") {
  ops::DecodeScheduleLimits limits;
  limits.ctas_per_item = 8;
  limits.slots = 396;
  limits.sms = 132;
  limits.max_items = ops::DecodeMaxItems(256, limits);
  std::vector<ops::DecodeRequest> b64(64, {0, 1024, 0});
  // Every wave whole: 512 CTAs unsplit are 2 waves of 17 (34); split in two, 3 waves of 9 plus
  // a merge of 2 (29).
  CHECK(ops::ChooseDecodeChunk(b64, limits) == 512);
  limits.price_last_wave = true;
  limits.lone_tile_cost = 0.8;
  limits.fused_merge_floor = 6.0;
  // Unsplit: 17 + the second wave's 116 CTAs alone on their SMs, 16 x 0.8 + 1 (30.8). Split: 9 +
  // 9 + 232 CTAs, 2 an SM, 8 x 0.8 + 1, + 6 (31.4).
  CHECK(ops::ChooseDecodeChunk(b64, limits) == 1024);
  // The last wave's price never falls below lone_tile_cost: 16 requests of 16k keys stay one
  // wave of 3 chunks (86 + 1 + 6) rather than 4 (64 + 1 + 64 x 0.8 + 1 + 6).
  std::vector<ops::DecodeRequest> b16(16, {0, 16384, 0});
  CHECK(ops::ChooseDecodeChunk(b16, limits) == 5504);
  // 16 requests of 1k keys: 128 lone CTAs (16 x 0.8 + 1) lose to 3 chunks (6 + 1 + 6); at 0.7
  // (16 x 0.7 + 1) they win.
  std::vector<ops::DecodeRequest> s16(16, {0, 1024, 0});
  CHECK(ops::ChooseDecodeChunk(s16, limits) == 384);
  limits.lone_tile_cost = 0.7;
  CHECK(ops::ChooseDecodeChunk(s16, limits) == 1024);
}

TEST_CASE("decode schedule merges uniform splits in a thread-block cluster", "[decode]") {
  ops::DecodeScheduleLimits limits;  // the H200's, 16-bit KV at D 128, 8 kv heads
  limits.ctas_per_item = 8;
  limits.slots = 264;
  limits.lone_tile_cost = 0.55;
  limits.max_items = ops::DecodeMaxItems(256, limits);
  limits.max_cluster = 8;
  // One request of 1024 keys: 8 chunks of 128 keys merged by a cluster of 8 (2 * 0.55 + 1 +
  // 0.5) beat 16 chunks of 64 merged through the workspace (0.55 + 1 + 2).
  auto one = ops::BuildDecodeSchedule({{5, 1024, 0}}, limits);
  CHECK(one.chunk == 128);
  CHECK(one.cluster == 8);
  CHECK(one.merge.empty());
  REQUIRE(one.work.size() == 8);
  for (int i = 0; i < 8; ++i) {
    CHECK(one.work[i].request == 0);
    CHECK(one.work[i].page_begin == 5);
    CHECK(one.work[i].kv_start == i * 128);
    CHECK(one.work[i].kv_end == i * 128 + 128);
    CHECK(one.work[i].partial == attention::kDecodePartialCluster);
    CHECK(one.work[i].merge == -1);
  }
  // Without clusters (graph mode, or before sm_90) the same request splits in 16.
  limits.max_cluster = 0;
  auto plain = ops::BuildDecodeSchedule({{5, 1024, 0}}, limits);
  CHECK(plain.chunk == 64);
  CHECK(plain.cluster == 0);
  CHECK(plain.merge.size() == 1);
  limits.max_cluster = 8;
  // 16 requests of 4096 keys: two chunks each, clusters of 2 in request order; the last chunk
  // of a request may be shorter (window), and items stay grouped by request.
  std::vector<ops::DecodeRequest> mid16(16, {0, 4096, 0});
  for (int b = 0; b < 16; ++b) mid16[b].page_begin = b * 256;
  mid16[3].kv_start = 100;
  auto mid = ops::BuildDecodeSchedule(mid16, limits);
  CHECK(mid.chunk == 2048);
  CHECK(mid.cluster == 2);
  REQUIRE(mid.work.size() == 32);
  for (int i = 0; i < 32; ++i) {
    CHECK(mid.work[i].request == i / 2);
    CHECK(mid.work[i].page_begin == i / 2 * 256);
  }
  CHECK(mid.work[6].kv_start == 100);
  CHECK(mid.work[7].kv_start == 2148);
  CHECK(mid.work[7].kv_end == 4096);
  // Chunks beyond cluster_max_chunk (2048) merge through the workspace: 16 requests of 16k keys
  // split in two as before.
  std::vector<ops::DecodeRequest> long16(16, {0, 16384, 0});
  auto l16 = ops::BuildDecodeSchedule(long16, limits);
  CHECK(l16.chunk == 8192);
  CHECK(l16.cluster == 0);
  CHECK(l16.merge.size() == 16);
  // Mixed chunk counts merge through the workspace.
  std::vector<ops::DecodeRequest> mixed = mid16;
  mixed[5].kv_len = 9000;
  CHECK(ops::BuildDecodeSchedule(mixed, limits).cluster == 0);
  // 16 requests of 1024 keys split in two (8 + 1 + 0.5 < 16 * 0.55 + 1): 256 CTAs, clusters
  // of 2; with the global merge they stay unsplit (see above).
  std::vector<ops::DecodeRequest> short16(16, {0, 1024, 0});
  auto s16 = ops::BuildDecodeSchedule(short16, limits);
  CHECK(s16.chunk == 512);
  CHECK(s16.cluster == 2);
  CHECK(s16.work.size() == 32);
}

TEST_CASE("single decode's uniform split is merged by a cluster under the batch rule", "[decode]") {
  ops::DecodeScheduleLimits limits;  // SingleDecode's on the H200: 16-bit KV at D 128, 8 kv heads
  limits.ctas_per_item = 8;
  limits.slots = 264;
  limits.max_items = 128;  // SingleDecodeWorkspaceBytes' partial slots
  limits.max_cluster = 8;
  // 1024 keys: 8 chunks of 128 in clusters of 8 (2 + 1 + 0.5) beat 16 of 64 (1 + 1 + 2).
  auto s = ops::ChooseSingleDecodeSplit(1024, limits);
  CHECK(s.chunk == 128);
  CHECK(s.chunks == 8);
  CHECK(s.cluster == 8);
  // Every cluster size 2..8.
  const std::pair<int, int> sizes[] = {{65, 2},  {129, 3}, {200, 4}, {300, 5},
                                       {700, 6}, {385, 7}, {900, 8}};
  for (auto [len, n] : sizes) {
    INFO("kv_len " << len);
    auto x = ops::ChooseSingleDecodeSplit(len, limits);
    CHECK(x.chunks == n);
    CHECK(x.cluster == n);
  }
  // 4k .. 32k keys: 32 chunks (one wave of 256 CTAs) are more than a cluster holds; the
  // workspace's merge stays.
  for (int len : {2048, 4096, 16384, 32768}) {
    INFO("kv_len " << len);
    auto x = ops::ChooseSingleDecodeSplit(len, limits);
    CHECK(x.chunks == 32);
    CHECK(x.cluster == 0);
  }
  // Unsplit: one tile, an empty cache, or no workspace.
  CHECK(ops::ChooseSingleDecodeSplit(64, limits).cluster == 0);
  CHECK(ops::ChooseSingleDecodeSplit(0, limits).chunks == 1);
  limits.max_items = 0;
  auto none = ops::ChooseSingleDecodeSplit(1024, limits);
  CHECK(none.chunk == 1024);
  CHECK(none.chunks == 1);
  CHECK(none.cluster == 0);
  limits.max_items = 128;
  // MHA with 32 kv heads: 4097 keys in 8 chunks of 576 (at most 2048 keys each).
  limits.ctas_per_item = 32;
  auto mha = ops::ChooseSingleDecodeSplit(4097, limits);
  CHECK(mha.chunk == 576);
  CHECK(mha.cluster == 8);
  // Knob off, fp8 KV or another head dim (max_cluster 0): the old split, 16 chunks of 64.
  limits.ctas_per_item = 8;
  limits.max_cluster = 0;
  auto off = ops::ChooseSingleDecodeSplit(1024, limits);
  CHECK(off.chunk == 64);
  CHECK(off.chunks == 16);
  CHECK(off.cluster == 0);
}

// Clusters of up to 16 (FLASHJIT_DECODE_MAX_CLUSTER=16, session 9's A/B) on the H200's
// limits: one request of 1k / 4k / 16k keys splits into 16 chunks (128 lone CTAs) merged by one
// cluster per kv head; 16 x 1k keeps its clusters of 2; 32k keys stay on the global merge; a
// request of 1100 keys takes a cluster of 9.
TEST_CASE("decode plans with clusters of up to 16", "[decode]") {
  ops::DecodeScheduleLimits limits;
  limits.ctas_per_item = 8;
  limits.slots = 264;
  limits.sms = 132;
  limits.lone_tile_cost = 0.55;
  limits.max_cluster = 16;
  auto plan = [&](int b, int len) {
    limits.max_items = ops::DecodeMaxItems(b, limits);
    return ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(b, {0, len, 0}), limits);
  };
  const std::tuple<int, int, int, int> expect[] = {
      {1, 1024, 64, 16},  {1, 4096, 256, 16},  {1, 16384, 1024, 16}, {1, 32768, 1024, 0},
      {16, 1024, 512, 2}, {16, 4096, 2048, 2}, {1, 1100, 128, 9}};
  for (auto [b, len, chunk, cluster] : expect) {
    INFO("B=" << b << " L=" << len);
    const ops::DecodeSchedule s = plan(b, len);
    CHECK(s.chunk == chunk);
    CHECK(s.cluster == cluster);
  }
  auto single = ops::ChooseSingleDecodeSplit(1024, limits);
  CHECK(single.chunks == 16);
  CHECK(single.cluster == 16);
}

// The persistent plan's assignment: every (item, head tile) unit exactly once, each CTA's list
// linked from its own index, balanced within one unit's cost, deterministic.
TEST_CASE("decode persistent plan assigns every unit once, balanced and deterministic",
          "[decode]") {
  auto check = [](const std::vector<attention::DecodeWorkItem>& work, int heads, int ctas) {
    const ops::DecodePersistentPlan a = ops::AssignDecodeUnits(work, heads, ctas);
    const ops::DecodePersistentPlan b = ops::AssignDecodeUnits(work, heads, ctas);
    const int64_t n_units = static_cast<int64_t>(work.size()) * heads;
    INFO("items " << work.size() << " heads " << heads << " ctas " << ctas);
    REQUIRE(a.ctas == std::min<int64_t>(ctas, n_units));
    CHECK(static_cast<int64_t>(a.units.size()) == std::max<int64_t>(a.ctas, n_units));
    // Deterministic: the same plan twice.
    REQUIRE(a.units.size() == b.units.size());
    CHECK((a.units.empty() || std::memcmp(a.units.data(), b.units.data(),
                                          a.units.size() * sizeof(attention::DecodeUnit)) == 0));
    // Walk every CTA's list: each (item, head tile) once, loads as reported.
    std::map<std::tuple<int, int, int, int>, int> seen;  // (request, start, end, head) -> count
    std::vector<bool> visited(a.units.size(), false);
    double max_cost = 0, max_load = 0, min_load = 1e300;
    for (int c = 0; c < a.ctas; ++c) {
      double load = 0;
      for (int i = c; i >= 0; i = a.units[i].next) {
        REQUIRE(i < static_cast<int>(a.units.size()));
        REQUIRE(!visited[i]);  // no cycles, no unit shared by two CTAs
        visited[i] = true;
        const attention::DecodeUnit& u = a.units[i];
        if (i == c && u.head_tile < 0) break;  // a CTA without units
        REQUIRE(u.head_tile >= 0);
        REQUIRE(u.head_tile < heads);
        ++seen[{u.w.request, u.w.kv_start, u.w.kv_end, u.head_tile}];
        const double cost = std::max(1, (u.w.kv_end - u.w.kv_start + 63) / 64) + 1.0;
        max_cost = std::max(max_cost, cost);
        load += cost;
      }
      CHECK(load == a.load[c]);
      max_load = std::max(max_load, load);
      min_load = std::min(min_load, load);
    }
    CHECK(std::count(visited.begin(), visited.end(), true) == static_cast<int64_t>(a.units.size()));
    for (const auto& w : work)
      for (int h = 0; h < heads; ++h) CHECK(seen[{w.request, w.kv_start, w.kv_end, h}] == 1);
    CHECK(static_cast<int64_t>(seen.size()) == n_units);
    // Longest-first greedy: no CTA ends more than one unit's cost above the least loaded.
    if (n_units > 0) CHECK(max_load - min_load <= max_cost);
    return a;
  };
  // The benchmark's B=64 L=1k: 512 equal units over 264 CTAs: 248 CTAs run two, 16 run one;
  // CTA c starts with unit c (item c / 8, head c % 8) and continues with unit 264 + c.
  ops::DecodeScheduleLimits limits;
  limits.ctas_per_item = 8;
  limits.slots = 264;
  limits.max_items = ops::DecodeMaxItems(256, limits);
  const auto b64 =
      ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(64, {0, 1024, 0}), limits);
  REQUIRE(b64.work.size() == 64);
  const auto p64 = check(b64.work, 8, 264);
  CHECK(p64.units[5].w.request == b64.work[0].request);
  CHECK(p64.units[5].head_tile == 5);
  REQUIRE(p64.units[5].next >= 264);
  CHECK(p64.units[p64.units[5].next].head_tile == (264 + 5) % 8);
  CHECK(p64.units[p64.units[5].next].w.request == b64.work[(264 + 5) / 8].request);
  CHECK(std::count(p64.load.begin(), p64.load.end(), 2 * 17.0) == 248);
  // Ragged lengths 0 .. 16384 with splits (global merges) over few CTAs; an empty request.
  std::mt19937 rng(7);
  std::vector<ops::DecodeRequest> ragged;
  int32_t page = 0;
  for (int i = 0; i < 40; ++i) {
    const int len = i == 0 ? 0 : i == 1 ? 16384 : static_cast<int>(rng() % 16385);
    ragged.push_back({page, len, 0});
    page += (len + 15) / 16;
  }
  const auto rs = ops::BuildDecodeSchedule(ragged, limits);
  CHECK(!rs.merge.empty());
  for (int ctas : {1, 7, 64, 264, 100000}) check(rs.work, 8, ctas);
  check(rs.work, 3, 5);
  check({}, 8, 264);
  // The default takes the persistent grid for 1-2 short units per resident CTA only: B=64
  // L=1k (512 units of 16 tiles over 264 CTAs), not B=64 L=4k (64 tiles), B=256 L=1k (2048
  // units), or one wave.
  CHECK(ops::DefaultPersistent(512, 16, 264));
  CHECK(ops::DefaultPersistent(528, 32, 264));
  CHECK_FALSE(ops::DefaultPersistent(512, 64, 264));
  CHECK_FALSE(ops::DefaultPersistent(2048, 16, 264));
  CHECK_FALSE(ops::DefaultPersistent(529, 16, 264));
  CHECK_FALSE(ops::DefaultPersistent(264, 16, 264));
}

// Pair stealing (session 12): the marked pairs' widened ranges overlap by exactly their region,
// which lies inside the request, holds whole tiles only and never its last tile; each side keeps
// at least min_own tiles of its own; unpaired and unsplit items and cluster plans stay unmarked.
TEST_CASE("decode schedule marks pairs of neighbouring chunks for stealing", "[decode]") {
  constexpr int kTile = attention::kDecodeTileKV;
  ops::DecodeScheduleLimits limits;
  limits.ctas_per_item = 8;
  limits.slots = 264;
  limits.sms = 132;
  limits.lone_tile_cost = 0.55;
  limits.max_cluster = 8;
  limits.max_items = ops::DecodeMaxItems(16, limits);
  // The bench's B=16 L=32k: two chunks of 16384 keys a request, 32-tile halves of the region.
  auto s = ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(16, {0, 32768, 0}), limits);
  REQUIRE(s.chunk == 16384);
  REQUIRE(s.cluster == 0);
  const auto before = s.work;
  {
    auto too_short = s;  // the default rule's floor: chunks of at least 64 tiles (here 256)
    CHECK(ops::MarkDecodeStealPairs(too_short, 5, 257) == 0);
    for (size_t i = 0; i < too_short.work.size(); ++i) CHECK(too_short.work[i].pad_ == 0);
  }
  CHECK(ops::MarkDecodeStealPairs(s, 5, 256) == 16);
  std::map<int, attention::DecodeWorkItem> by_partial;
  for (const auto& w : s.work) by_partial[w.partial] = w;
  for (const auto& m : s.merge) {
    const auto& f = by_partial[m.first_partial];
    const auto& b = by_partial[m.first_partial + 1];
    CHECK((f.pad_ & 3) == attention::kDecodeStealFront);
    CHECK((b.pad_ & 3) == attention::kDecodeStealBack);
    CHECK(f.pad_ >> 2 == 64);
    CHECK(b.pad_ >> 2 == 64);
    CHECK(f.kv_start == 0);
    CHECK(f.kv_end == 16384 + 32 * kTile);
    CHECK(b.kv_start == 16384 - 32 * kTile);
    CHECK(b.kv_end == 32768);
  }
  // Ragged lengths, a window, an odd number of chunks: the last chunk of an odd count stays
  // plain; regions hold whole tiles from the request's first visible key, never the last tile.
  limits.max_items = ops::DecodeMaxItems(4, limits);
  std::vector<ops::DecodeRequest> ragged = {{0, 30000, 0}, {0, 1, 0}, {0, 29000, 977}, {0, 0, 0}};
  auto r = ops::BuildDecodeSchedule(ragged, limits);
  REQUIRE(r.cluster == 0);
  const auto plain = r.work;
  const int pairs = ops::MarkDecodeStealPairs(r, 6);
  CHECK(pairs > 0);
  int fronts = 0, backs = 0;
  for (size_t i = 0; i < r.work.size(); ++i) {
    const auto& w = r.work[i];
    const auto& p = plain[i];
    const int role = w.pad_ & 3, region = w.pad_ >> 2;
    const int kv_start = ragged[w.request].kv_start;
    if (role == 0) {
      CHECK(w.kv_start == p.kv_start);
      CHECK(w.kv_end == p.kv_end);
      continue;
    }
    CHECK(region % 2 == 0);
    CHECK(region >= 2);
    if (role == attention::kDecodeStealFront) {
      ++fronts;
      CHECK(w.kv_start == p.kv_start);
      CHECK(w.kv_end == p.kv_end + region / 2 * kTile);
      CHECK((p.kv_end - kv_start) % kTile == 0);
      CHECK((p.kv_end - p.kv_start) / kTile - region / 2 >= 6);
    } else {
      ++backs;
      CHECK(w.kv_end == p.kv_end);
      CHECK(w.kv_start == p.kv_start - region / 2 * kTile);
      CHECK((p.kv_end - p.kv_start + kTile - 1) / kTile - region / 2 >= 6);
      CHECK(w.kv_end <= w.kv_len);
    }
  }
  CHECK(fronts == pairs);
  CHECK(backs == pairs);
  // Too short to keep min_own tiles of their own: nothing marked; cluster plans: nothing.
  auto short_pairs = ops::BuildDecodeSchedule(ragged, limits);
  CHECK(ops::MarkDecodeStealPairs(short_pairs, 1000) == 0);
  auto cl = ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(16, {0, 4096, 0}), limits);
  REQUIRE(cl.cluster > 1);
  CHECK(ops::MarkDecodeStealPairs(cl, 2) == 0);
}

// Session 13: the last CTA's merge priced by its round trips, and clusters of more than 2 CTAs
// only where the GPU holds them all (DecodeScheduleLimits::merge_rows_per_warp,
// cluster_max_ctas), as BatchDecodeLimits sets them on the H200 (132 SMs, 16-bit D 128).
TEST_CASE("decode schedule prices the merge of many partials and full-GPU clusters", "[decode]") {
  auto h200 = [](int qo, int kv, bool s13) {
    ops::DecodeScheduleLimits l;
    l.ctas_per_item = kv;
    l.slots = 264;
    l.sms = 132;
    l.lone_tile_cost = 0.55;
    l.max_cluster = 8;
    if (s13) {
      l.merge_rows_per_warp = (std::min(qo / kv, 16) + 3) / 4;
      l.cluster_max_ctas = 240;
    }
    return l;
  };
  auto plan = [](const ops::DecodeScheduleLimits& base, int b, int len) {
    ops::DecodeScheduleLimits l = base;
    l.max_items = ops::DecodeMaxItems(b, l);
    return ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(b, {0, len, 0}), l);
  };
  // The benchmark's configuration (32 / 8 heads): the same plan at every shape.
  for (int b : {1, 16, 64, 256})
    for (int len : {1024, 4096, 16384, 32768}) {
      const auto a = plan(h200(32, 8, false), b, len), c = plan(h200(32, 8, true), b, len);
      INFO("B=" << b << " L=" << len);
      CHECK(a.chunk == c.chunk);
      CHECK(a.cluster == c.cluster);
      CHECK(a.work.size() == c.work.size());
    }
  // One kv head, 8 query rows (2 per warp): 256 one-tile chunks whose merge took 45 us became
  // 32 chunks of 512 keys.
  CHECK(plan(h200(8, 1, false), 1, 16384).chunk == 64);
  const auto tp8 = plan(h200(8, 1, true), 1, 16384);
  CHECK(tp8.chunk == 512);
  CHECK(tp8.work.size() == 32);
  // 32 kv heads, one request: 8 chunks in clusters of 8 are 256 CTAs (240 fit): no cluster of 8.
  CHECK(plan(h200(32, 32, false), 1, 16384).cluster == 8);
  const auto mha = plan(h200(32, 32, true), 1, 16384);
  CHECK(mha.cluster <= 2);
  CHECK(mha.work.size() * 32 <= 264);
  // Clusters of more than 2 never exceed 240 CTAs; clusters of 2 may fill all 264 slots.
  for (int kv : {1, 2, 4, 8, 32})
    for (int b : {1, 4, 16, 64})
      for (int len : {1024, 4096, 16384}) {
        const auto s = plan(h200(8 * kv, kv, true), b, len);
        INFO("kv " << kv << " B=" << b << " L=" << len << " cluster " << s.cluster);
        if (s.cluster > 2) CHECK(s.work.size() * kv <= 240);
      }
}

// Session 13: the D 256 kernel of a 16-bit cache reads Q's fragments from shared memory (its
// registers form spilled); every other head dim and fp8 keep them in registers. The knob
// FLASHJIT_DECODE_Q_SMEM=0 turns it off everywhere.
TEST_CASE("decode variants read Q from shared memory only at head dim 256 with a 16-bit cache",
          "[decode]") {
  const char* knob = std::getenv("FLASHJIT_DECODE_Q_SMEM");
  const bool off = knob && std::strcmp(knob, "0") == 0;
  for (DType kv : {DType::kBF16, DType::kF8E4M3})
    for (int d : {64, 128, 256}) {
      const ops::DecodeSpec s = ops::ChooseDecode(DType::kBF16, kv, d, false, false, false);
      INFO("kv " << static_cast<int>(kv) << " D " << d);
      const bool want = !off && d == 256 && kv == DType::kBF16;
      CHECK((s.q_smem != 0) == want);
      auto v = s.ToVariant();
      REQUIRE(v.ok());
      auto tu = codegen::Render(*v);
      REQUIRE(tu.ok());
      CHECK(tu->find(want ? "kQSmem = true" : "kQSmem = false") != std::string::npos);
    }
  // The field is part of the key: the two forms are different kernels.
  ops::DecodeSpec a = ops::ChooseDecode(DType::kF16, DType::kF16, 256, true, false, false);
  ops::DecodeSpec b = a;
  b.q_smem = !a.q_smem;
  auto va = a.ToVariant(), vb = b.ToVariant();
  REQUIRE(va.ok());
  REQUIRE(vb.ok());
  CHECK(va->canonical_json() != vb->canonical_json());
  CHECK(va->name() != vb->name());
}

// Session 14: D 64 (16-bit) runs 3 stages, 4 CTAs an SM; its persistent kernel holds 3; its
// plans price the last CTA's merge at 0.76 tiles a round trip (D 128: 0.38) and take the
// persistent grid only when forced (it read 8-20 % slower at every D 64 shape that took it).
TEST_CASE("decode at head dim 64: 4 CTAs an SM, its merge price, no persistent grid by default",
          "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_STAGES") || std::getenv("FLASHJIT_DECODE_PLAN_MODEL") ||
      std::getenv("FLASHJIT_DECODE_PERSISTENT")) {
    WARN("a decode plan knob is set: the default plans are not checked");
    return;
  }
  auto engine = DryEngine();
  auto config = [](int head_dim, DType kv) {
    BatchDecodeConfig c;
    c.num_qo_heads = 32;
    c.num_kv_heads = 8;
    c.head_dim = head_dim;
    c.kv_dtype = kv;
    return c;
  };
  const BatchDecodeConfig d64 = config(64, DType::kBF16), d128 = config(128, DType::kBF16);
  CHECK(ops::DecodeStages(64, 2) == 3);
  const ops::DecodeScheduleLimits l64 = ops::BatchDecodeLimits(*engine, d64, 132);
  const ops::DecodeScheduleLimits l128 = ops::BatchDecodeLimits(*engine, d128, 132);
  CHECK(l64.slots == 528);
  CHECK(l64.PersistentSlots() == 396);
  CHECK(l64.merge_round_trip == Approx(0.76));
  CHECK(l128.slots == 264);
  CHECK(l128.PersistentSlots() == 264);
  CHECK(l128.merge_round_trip == Approx(0.38));
  CHECK_FALSE(ops::DecodePersistentAllowed(d64, ops::kPersistentAuto));
  CHECK(ops::DecodePersistentAllowed(d64, ops::kPersistentAlways));
  CHECK(ops::DecodePersistentAllowed(d128, ops::kPersistentAuto));
  CHECK_FALSE(ops::DecodePersistentAllowed(config(64, DType::kF8E4M3), ops::kPersistentAuto));
  // The shapes whose plans regressed with 528 slots and the D 128 merge price (consolidated
  // call, part 2): at least 2 tiles a chunk at B=1 L=4k, and none persistent, with the last
  // CTA's merge (FLASHJIT_DECODE_MERGE=fused: no merge kernel in the model).
  for (auto [b, len] : {std::pair{1, 4096}, {1, 16384}, {16, 1024}, {16, 4096}, {64, 1024}}) {
    ops::DecodeScheduleLimits l = l64;
    l.merge_kernel_base = 0;
    l.max_items = ops::DecodeMaxItems(b, l);
    const ops::DecodeSchedule sched =
        ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(b, {0, len, 0}), l);
    INFO("B=" << b << " L=" << len << " chunk " << sched.chunk);
    CHECK(sched.chunk >= 2 * attention::kDecodeTileKV);
    CHECK_FALSE(ops::ChooseDecodePlanForm(d64, ops::kPersistentAuto, sched, l).persistent);
  }
}

}  // namespace
}  // namespace flashjit
