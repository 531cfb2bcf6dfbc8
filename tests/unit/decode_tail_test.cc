// Tail pieces of one-wave decode plans (ops::CutDecodeTail, session 22), on the CPU: every key of
// every request is read by exactly one work item, a request's items sit on consecutive partial
// slots under one merge item, the pieces follow the kept parts, the plan fits its capacity, and
// plans the rule does not cover are left as they were.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "src/ops/decode/decode_schedule.h"

namespace flashjit {
namespace {

constexpr int64_t kTile = attention::kDecodeTileKV;

// The H200's bf16 32 / 8 heads D 128 limits: 8 CTAs an item, 264 slots, 132 SMs.
ops::DecodeScheduleLimits Limits(int max_batch, double fraction, int piece = 0) {
  ops::DecodeScheduleLimits l;
  l.ctas_per_item = 8;
  l.slots = 264;
  l.sms = 132;
  l.lone_tile_cost = 0.55;
  l.merge_rows_per_warp = 1;
  l.tail_fraction = fraction;
  l.tail_piece = piece;
  l.max_items = ops::DecodeMaxItems(max_batch, l);
  return l;
}

int64_t Tiles(const attention::DecodeWorkItem& w) {
  return (int64_t(w.kv_end) - w.kv_start + kTile - 1) / kTile;
}

// Checks the schedule's invariants against the requests; returns the items of each request.
std::map<int, std::vector<attention::DecodeWorkItem>> CheckPlan(
    const ops::DecodeSchedule& s, const std::vector<ops::DecodeRequest>& req,
    const ops::DecodeScheduleLimits& l) {
  CHECK(static_cast<int64_t>(s.work.size()) <= l.max_items);
  for (size_t i = 1; i < s.work.size(); ++i)  // longest first
    CHECK(s.work[i - 1].kv_end - s.work[i - 1].kv_start >= s.work[i].kv_end - s.work[i].kv_start);
  std::map<int, std::vector<attention::DecodeWorkItem>> by_request;
  for (const attention::DecodeWorkItem& w : s.work) by_request[w.request].push_back(w);
  REQUIRE(by_request.size() == req.size());
  std::vector<int> slot_used(s.num_partials, 0);
  for (auto& [b, items] : by_request) {
    INFO("request " << b);
    const ops::DecodeRequest& r = req[b];
    // The keys [kv_start, kv_len) once each, every item starting on a tile of its request.
    std::vector<int> seen(r.kv_len, 0);
    for (const attention::DecodeWorkItem& w : items) {
      CHECK(w.kv_len == r.kv_len);
      CHECK(w.page_begin == r.page_begin);
      CHECK((w.kv_start - r.kv_start) % kTile == 0);
      CHECK(w.kv_start <= w.kv_end);
      for (int k = w.kv_start; k < w.kv_end; ++k) ++seen[k];
    }
    int wrong = 0;  // keys read other than once (or at all, before kv_start)
    for (int k = 0; k < r.kv_len; ++k) wrong += seen[k] != (k >= r.kv_start ? 1 : 0);
    CHECK(wrong == 0);
    if (items.size() == 1) {
      CHECK(items[0].partial == -1);
      CHECK(items[0].merge == -1);
      continue;
    }
    const int m = items[0].merge;
    REQUIRE(m >= 0);
    REQUIRE(m < static_cast<int>(s.merge.size()));
    CHECK(s.merge[m].request == b);
    CHECK(s.merge[m].num_partials == static_cast<int>(items.size()));
    for (const attention::DecodeWorkItem& w : items) {
      CHECK(w.merge == m);
      CHECK(w.partial >= s.merge[m].first_partial);
      CHECK(w.partial < s.merge[m].first_partial + s.merge[m].num_partials);
      REQUIRE(w.partial < s.num_partials);
      ++slot_used[w.partial];
    }
  }
  for (int used : slot_used) CHECK(used == 1);
  return by_request;
}

TEST_CASE("decode plans: tail pieces of one-wave plans", "[decode]") {
  ops::SetDecodeChunkForTesting(0);
  SECTION("B=16 L=32k: two chunks of 256 tiles keep 240, the rest in pieces of 8") {
    const std::vector<ops::DecodeRequest> req(16, {0, 32768, 0});
    const ops::DecodeScheduleLimits plain = Limits(16, 0.0);
    const ops::DecodeSchedule before = ops::BuildDecodeSchedule(req, plain);
    REQUIRE(before.work.size() == 32);  // the uniform plan: 256 CTAs of 256 tiles
    const ops::DecodeScheduleLimits l = Limits(16, 0.03);  // the default
    const ops::DecodeSchedule s = ops::BuildDecodeSchedule(req, l);
    const auto by_request = CheckPlan(s, req, l);
    // A slot's share: 16 x 512 x 8 / 264 = 248.2 tiles; kept floor(0.97 x 248.2) = 240; each
    // chunk gives 16 tiles as pieces of round(248.2 / 32) = 8: 2 pieces.
    for (const auto& [b, items] : by_request) {
      REQUIRE(items.size() == 6);
      int kept = 0, pieces = 0;
      for (const attention::DecodeWorkItem& w : items) {
        kept += Tiles(w) == 240;
        pieces += Tiles(w) == 8;
      }
      CHECK(kept == 2);
      CHECK(pieces == 4);
    }
    CHECK(s.merge.size() == 16);
    CHECK(s.num_partials == 16 * 6);
    // The kept parts launch first, then the pieces.
    for (size_t i = 0; i < s.work.size(); ++i) CHECK((Tiles(s.work[i]) == 240) == (i < 32));
    // At 10 %, 33 tiles a chunk: 5 pieces of 6-7 would make 192 items, more than the workspace's
    // 152 (DecodeMaxItems for 16 requests), so the pieces grow to 11 tiles, 3 a chunk.
    const ops::DecodeSchedule wide = ops::BuildDecodeSchedule(req, Limits(16, 0.10));
    CheckPlan(wide, req, Limits(16, 0.10));
    CHECK(wide.work.size() == 32 + 32 * 3);
    for (size_t i = 32; i < wide.work.size(); ++i) CHECK(Tiles(wide.work[i]) == 11);
    // The same plan every time.
    const ops::DecodeSchedule again = ops::BuildDecodeSchedule(req, l);
    REQUIRE(again.work.size() == s.work.size());
    for (size_t i = 0; i < s.work.size(); ++i) {
      CHECK(again.work[i].kv_start == s.work[i].kv_start);
      CHECK(again.work[i].partial == s.work[i].partial);
    }
  }
  SECTION("B=64 L=4k, two waves: items of 64 tiles keep 60 (tail_max_waves 2, 62 tiles a wave)") {
    const std::vector<ops::DecodeRequest> req(64, {0, 4096, 0});
    ops::DecodeScheduleLimits l = Limits(64, 0.03);
    CHECK(ops::BuildDecodeSchedule(req, l).work.size() == 64);  // one wave only: left alone
    l.tail_max_waves = 2;
    // A wave's share, 62 tiles, is under the default's 192 for plans of two waves: left alone.
    CHECK(ops::BuildDecodeSchedule(req, l).work.size() == 64);
    l.tail_min_wave_tiles = 63;  // still over 62: left alone
    CHECK(ops::BuildDecodeSchedule(req, l).work.size() == 64);
    l.tail_min_wave_tiles = 62;
    const ops::DecodeSchedule s = ops::BuildDecodeSchedule(req, l);
    CheckPlan(s, req, l);
    // A slot's share 64 x 64 x 8 / 264 = 124.1 tiles over 2 waves: kept floor(0.97 x 62.06) = 60,
    // each item gives 4 tiles as one piece (round(124.1 / 32) = 4).
    REQUIRE(s.work.size() == 128);
    for (size_t i = 0; i < s.work.size(); ++i) CHECK(Tiles(s.work[i]) == (i < 64 ? 60 : 4));
    // A plan of more waves than tail_max_waves is left as it was.
    const std::vector<ops::DecodeRequest> many(100, {0, 4096, 0});
    const size_t plain = ops::BuildDecodeSchedule(many, Limits(100, 0.0)).work.size();
    REQUIRE(plain * 8 > 3 * 264);
    ops::DecodeScheduleLimits three = Limits(100, 0.03);
    three.tail_max_waves = 3;
    CHECK(ops::BuildDecodeSchedule(many, three).work.size() == plain);
  }
  SECTION("a ragged one-wave batch: windows, an empty and a one-key request, unsplit requests") {
    std::mt19937 rng(20261202);
    int cut = 0;
    for (int round = 0; round < 40; ++round) {
      INFO("round " << round);
      std::vector<ops::DecodeRequest> req;
      int32_t page = 0;
      const int n = 3 + static_cast<int>(rng() % 14);
      for (int b = 0; b < n; ++b) {
        const int32_t len = b == 0 ? 0 : b == 1 ? 1 : 1 + static_cast<int32_t>(rng() % 65000);
        const int32_t start = rng() % 3 == 0 ? static_cast<int32_t>(rng() % (len + 1)) : 0;
        req.push_back({page, len, start});
        page += len / 16 + 1;
      }
      const int piece = static_cast<int>(rng() % 3) * 4;  // 0 (auto), 4, 8
      ops::DecodeScheduleLimits l = Limits(n, 0.05 + 0.05 * (rng() % 4), piece);
      l.tail_min_tiles = 8;
      l.tail_min_whole_tiles = 8;
      // The chooser plans such batches over several waves; chunks forced long (every other
      // round unsplit) make plans of one wave.
      ops::SetDecodeChunkForTesting(round % 2 ? 1 << 16 : 16384);
      const ops::DecodeSchedule s = ops::BuildDecodeSchedule(req, l);
      CheckPlan(s, req, l);
      cut += s.work.size() > ops::BuildDecodeSchedule(req, Limits(n, 0.0)).work.size();
    }
    ops::SetDecodeChunkForTesting(0);
    CHECK(cut >= 10);  // the rule applied to a fair share of the batches
  }
  SECTION("whole requests of one-wave plans: only from tail_min_whole_tiles a slot") {
    // B=32 L=8k: 256 unsplit CTAs of 128 tiles, a slot's share 124.1 tiles, under the default 384:
    // left as it was; at 124 cut like split items (keep floor(0.97 x 124.1) = 120, give 8 tiles as
    // 2 pieces of round(124.1 / 32) = 4).
    const std::vector<ops::DecodeRequest> req(32, {0, 8192, 0});
    ops::DecodeScheduleLimits l = Limits(32, 0.03);
    REQUIRE(ops::BuildDecodeSchedule(req, Limits(32, 0.0)).work.size() == 32);
    const ops::DecodeSchedule s = ops::BuildDecodeSchedule(req, l);
    CHECK(s.work.size() == 32);
    CHECK(s.merge.empty());
    l.tail_min_whole_tiles = 124;
    const ops::DecodeSchedule cut = ops::BuildDecodeSchedule(req, l);
    CheckPlan(cut, req, l);
    REQUIRE(cut.work.size() == 32 + 64);
    for (size_t i = 0; i < cut.work.size(); ++i) CHECK(Tiles(cut.work[i]) == (i < 32 ? 120 : 4));
    // B=32 L=32k: unsplit, 496.5 tiles a slot, over 384: cut (keep 481, give 31 tiles as pieces
    // of 16 and 15).
    const std::vector<ops::DecodeRequest> longer(32, {0, 32768, 0});
    const ops::DecodeScheduleLimits d = Limits(32, 0.03);
    const ops::DecodeSchedule s2 = ops::BuildDecodeSchedule(longer, d);
    CheckPlan(s2, longer, d);
    REQUIRE(s2.work.size() == 32 + 64);
    for (size_t i = 0; i < s2.work.size(); ++i)
      CHECK(Tiles(s2.work[i]) == (i < 32 ? 481 : i < 64 ? 16 : 15));
    // A mixed batch (chunks forced to 16k keys): the split requests give their tails, the whole
    // ones keep theirs.
    std::vector<ops::DecodeRequest> mixed;
    for (int b = 0; b < 16; ++b) mixed.push_back({b * 2048, b % 2 ? 16384 : 32768, 0});
    ops::SetDecodeChunkForTesting(16384);
    const ops::DecodeSchedule m = ops::BuildDecodeSchedule(mixed, Limits(16, 0.03));
    const ops::DecodeSchedule m0 = ops::BuildDecodeSchedule(mixed, Limits(16, 0.0));
    ops::SetDecodeChunkForTesting(0);
    const auto by_request = CheckPlan(m, mixed, Limits(16, 0.03));
    REQUIRE(m.work.size() > m0.work.size());
    for (const auto& [b, items] : by_request) {
      INFO("request " << b);
      if (b % 2) {
        CHECK(items.size() == 1);  // whole: 256 tiles, a slot's share 186.2 < 384
      } else {
        CHECK(items.size() > 2);  // two chunks of 256 tiles, each over floor(0.97 x 186.2)
      }
    }
  }
  SECTION("plans the rule leaves alone") {
    const auto same = [](const std::vector<ops::DecodeRequest>& req, int max_batch) {
      const ops::DecodeSchedule a = ops::BuildDecodeSchedule(req, Limits(max_batch, 0.0));
      const ops::DecodeScheduleLimits l = Limits(max_batch, 0.10);
      const ops::DecodeSchedule b = ops::BuildDecodeSchedule(req, l);
      REQUIRE(a.work.size() == b.work.size());
      for (size_t i = 0; i < a.work.size(); ++i) {
        CHECK(a.work[i].kv_start == b.work[i].kv_start);
        CHECK(a.work[i].kv_end == b.work[i].kv_end);
        CHECK(a.work[i].partial == b.work[i].partial);
      }
      CHECK(a.merge.size() == b.merge.size());
    };
    same(std::vector<ops::DecodeRequest>(64, {0, 4096, 0}), 64);  // two waves
    same(std::vector<ops::DecodeRequest>(16, {0, 4096, 0}), 16);  // a slot's share under 96 tiles
    same(std::vector<ops::DecodeRequest>(256, {0, 1024, 0}), 256);
    // The workspace's items cannot hold a piece for every long item.
    ops::DecodeScheduleLimits tight = Limits(16, 0.10);
    const std::vector<ops::DecodeRequest> req(16, {0, 32768, 0});
    tight.max_items = 40;
    const ops::DecodeSchedule s = ops::BuildDecodeSchedule(req, tight);
    CHECK(s.work.size() == 32);
  }
  SECTION("pieces grow to fit the capacity") {
    const std::vector<ops::DecodeRequest> req(16, {0, 32768, 0});
    ops::DecodeScheduleLimits l = Limits(16, 0.10, 2);
    l.max_items = 32 + 64;  // room for two pieces an item
    ops::DecodeSchedule s = ops::BuildDecodeSchedule(req, l);
    CheckPlan(s, req, l);
    CHECK(s.work.size() == 32 + 64);
    CHECK(ops::CutDecodeTail(s, l) == 0);  // no room left, and no longer one wave
  }
}

}  // namespace
}  // namespace flashjit
