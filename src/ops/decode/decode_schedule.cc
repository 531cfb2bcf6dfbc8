#include "src/ops/decode/decode_schedule.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <queue>
#include <utility>

namespace flashjit::ops {
namespace {

constexpr int64_t kTile = attention::kDecodeTileKV;

std::atomic<int64_t> g_chunk_for_testing{0};  // SetDecodeChunkForTesting; 0: the knob

int64_t ChunksOf(const DecodeRequest& r, int64_t chunk) {
  const int64_t keys = r.kv_len - r.kv_start;
  return std::max<int64_t>(1, (keys + chunk - 1) / chunk);
}

int64_t TilesOf(const attention::DecodeWorkItem& w) {
  return std::max<int64_t>(0, (int64_t(w.kv_end) - w.kv_start + kTile - 1) / kTile);
}

// Longest first: the GPU starts CTAs roughly in launch order. Stable: equal items keep their
// order (requests, then keys).
void SortLongestFirst(std::vector<attention::DecodeWorkItem>& work) {
  std::stable_sort(work.begin(), work.end(), [](const auto& a, const auto& b) {
    return a.kv_end - a.kv_start > b.kv_end - b.kv_start;
  });
}

int64_t ItemsFor(std::span<const DecodeRequest> requests, int64_t chunk) {
  int64_t items = 0;
  for (const DecodeRequest& r : requests) items += ChunksOf(r, chunk);
  return items;
}

// The cluster size that merges a batch split by `chunk`: every request has the same number of
// chunks, min_cluster .. max_cluster (over 2: the plan's CTAs at most cluster_max_ctas); else 0.
int32_t ClusterFor(std::span<const DecodeRequest> requests, int64_t chunk,
                   const DecodeScheduleLimits& limits) {
  if (limits.max_cluster < 2 || requests.empty() || chunk > limits.cluster_max_chunk) return 0;
  const int64_t n = ChunksOf(requests[0], chunk);
  if (n < std::max(2, limits.min_cluster) || n > limits.max_cluster) return 0;
  if (n > 2 && n * static_cast<int64_t>(requests.size()) * std::max(1, limits.ctas_per_item) >
                   limits.cluster_max_ctas)
    return 0;
  for (const DecodeRequest& r : requests)
    if (ChunksOf(r, chunk) != n) return 0;
  return static_cast<int32_t>(n);
}

// The modelled time of the last CTA's merge of split requests of at most n chunks, in tiles
// (DecodeScheduleLimits::merge_rows_per_warp).
double FusedMergeCost(int64_t n, const DecodeScheduleLimits& limits) {
  if (limits.merge_rows_per_warp <= 0) return limits.fused_merge_floor;
  const int64_t lse_blocks = (n + 31) / 32;
  const int64_t batches = (n + limits.merge_batch - 1) / std::max(1, limits.merge_batch);
  const double trips = static_cast<double>(2 * lse_blocks - 1 + batches);
  return std::max(limits.fused_merge_floor,
                  limits.merge_round_trip * limits.merge_rows_per_warp * trips);
}

// The modelled time of `ctas` CTAs of `tiles` tiles each, in tiles: waves of `slots` CTAs, each
// tile plus a fixed cost of one, a lone CTA's tile at `lone` (DecodeScheduleLimits::
// lone_tile_cost, price_last_wave).
double WavesCost(int64_t ctas, int64_t tiles, double lone, const DecodeScheduleLimits& limits) {
  const int64_t per_wave = std::max(1, limits.slots);
  const int64_t sms = std::max(1, limits.sms);
  if (!limits.price_last_wave || ctas <= sms) {
    const int64_t waves = (ctas + per_wave - 1) / per_wave;
    const double tile_cost = ctas <= sms ? lone : 1.0;
    return static_cast<double>(waves) * (static_cast<double>(tiles) * tile_cost + 1);
  }
  const int64_t full = ctas / per_wave, rest = ctas % per_wave;
  double cost = static_cast<double>(full) * (static_cast<double>(tiles) + 1);
  if (rest > 0) {
    const double per_sm = static_cast<double>((rest + sms - 1) / sms);
    const double share = per_sm * static_cast<double>(sms) / static_cast<double>(per_wave);
    cost += static_cast<double>(tiles) * std::max(lone, std::min(1.0, share)) + 1;
  }
  return cost;
}

}  // namespace

double DecodeMergeCost(int64_t n, int64_t waves, const DecodeScheduleLimits& limits, bool* kernel) {
  const double fused = FusedMergeCost(n, limits);
  double cost = fused;
  if (limits.merge_kernel_base > 0 && waves <= 1 && n >= limits.merge_kernel_min_partials) {
    const int64_t per = std::max(1, limits.merge_kernel_partials);
    const double k = limits.merge_kernel_base +
                     limits.merge_kernel_trip * static_cast<double>((n + per - 1) / per - 1);
    cost = std::min(fused, k);
  }
  if (kernel) *kernel = cost < fused;
  return cost;
}

void SetDecodeChunkForTesting(int64_t keys) {
  g_chunk_for_testing.store(keys > 0 ? keys : 0, std::memory_order_relaxed);
}

int32_t DecodeFirstKey(int64_t kv_len, int32_t window_left, int fixed_page) {
  const int64_t first = window_left >= 0 ? std::max<int64_t>(0, kv_len - 1 - window_left) : 0;
  return static_cast<int32_t>(fixed_page > 0 ? first - first % fixed_page : first);
}

int32_t DecodeMaxItems(int32_t max_batch, const DecodeScheduleLimits& limits, int extra_waves) {
  // The chooser rarely takes more than about four waves of split items beyond one per request.
  const int64_t per_wave = std::max(1, limits.slots / std::max(1, limits.ctas_per_item));
  return static_cast<int32_t>(max_batch + int64_t(extra_waves) * per_wave + 4);
}

int32_t ChooseDecodeChunk(std::span<const DecodeRequest> requests,
                          const DecodeScheduleLimits& limits) {
  // Tuning knob for benchmarks: FLASHJIT_DECODE_CHUNK (keys, rounded up to a tile) fixes the
  // chunk where the workspace has room for the items it makes.
  static const int64_t kKnob = [] {
    const char* v = std::getenv("FLASHJIT_DECODE_CHUNK");
    return v ? std::atoll(v) : 0;
  }();
  const int64_t test = g_chunk_for_testing.load(std::memory_order_relaxed);
  const int64_t wanted = test > 0 ? test : kKnob;
  const int64_t forced =
      wanted > 0 && wanted <= 0x7fffffff - kTile ? (wanted + kTile - 1) / kTile * kTile : 0;
  if (forced > 0 && ItemsFor(requests, forced) <= limits.max_items)
    return static_cast<int32_t>(forced);
  int64_t longest = 0;
  for (const DecodeRequest& r : requests)
    longest = std::max<int64_t>(longest, r.kv_len - r.kv_start);
  const int64_t max_tiles = std::max<int64_t>(1, (longest + kTile - 1) / kTile);
  const int64_t per_wave = std::max(1, limits.slots);
  // Costs in units of one tile's time; a CTA's fixed cost (launch, prologue, epilogue) is
  // about one tile, the merge launch about two.
  int64_t best_tiles = max_tiles;
  double best_cost = 1e300;
  const int64_t step = std::max<int64_t>(1, max_tiles / 1024);  // bounded planning time
  for (int64_t tiles = max_tiles; tiles >= 1; tiles -= (tiles > step ? step : 1)) {
    const int64_t items = ItemsFor(requests, tiles * kTile);
    if (items > limits.max_items) break;  // smaller chunks only make more items
    const int64_t ctas = items * limits.ctas_per_item;
    const int64_t waves = (ctas + per_wave - 1) / per_wave;
    const bool split = items > static_cast<int64_t>(requests.size());
    bool merge_kernel = false;
    const double merge =
        !split ? 0.0
               : (ClusterFor(requests, tiles * kTile, limits)
                      ? limits.cluster_merge_cost
                      : DecodeMergeCost((longest + tiles * kTile - 1) / (tiles * kTile), waves,
                                        limits, &merge_kernel));
    const double lone = merge_kernel && limits.lone_tile_cost_merge_kernel > 0
                            ? limits.lone_tile_cost_merge_kernel
                            : limits.lone_tile_cost;
    const double cost = WavesCost(ctas, tiles, lone, limits) + merge;
    if (cost < best_cost) {  // ties keep the larger chunk (fewer partials)
      best_cost = cost;
      best_tiles = tiles;
    }
    if (tiles == 1) break;
  }
  return static_cast<int32_t>(best_tiles * kTile);
}

DecodeSchedule BuildDecodeSchedule(const std::vector<DecodeRequest>& requests,
                                   const DecodeScheduleLimits& limits) {
  DecodeSchedule s;
  s.chunk = ChooseDecodeChunk(requests, limits);
  s.cluster = ClusterFor(requests, s.chunk, limits);
  if (s.cluster > 1) {
    // Request order, `cluster` consecutive items each: the grid's clusters are these groups.
    for (int32_t b = 0; b < static_cast<int32_t>(requests.size()); ++b) {
      const DecodeRequest& r = requests[b];
      for (int32_t i = 0; i < s.cluster; ++i) {
        attention::DecodeWorkItem w;
        w.request = b;
        w.page_begin = r.page_begin;
        w.kv_len = r.kv_len;
        w.kv_start = std::min(r.kv_len, r.kv_start + i * s.chunk);
        w.kv_end = std::min(r.kv_len, w.kv_start + s.chunk);
        w.partial = attention::kDecodePartialCluster;
        w.merge = -1;
        w.pad_ = 0;
        s.work.push_back(w);
      }
    }
    return s;
  }
  for (int32_t b = 0; b < static_cast<int32_t>(requests.size()); ++b) {
    const DecodeRequest& r = requests[b];
    const int32_t keys = r.kv_len - r.kv_start;
    const int32_t n = std::max(1, (keys + s.chunk - 1) / s.chunk);
    const int32_t merge = n > 1 ? static_cast<int32_t>(s.merge.size()) : -1;
    if (n > 1) s.merge.push_back({b, s.num_partials, n, 0});
    for (int32_t i = 0; i < n; ++i) {
      attention::DecodeWorkItem w;
      w.request = b;
      w.page_begin = r.page_begin;
      w.kv_len = r.kv_len;
      w.kv_start = r.kv_start + i * s.chunk;
      w.kv_end = std::min(r.kv_len, w.kv_start + s.chunk);
      w.partial = n > 1 ? s.num_partials + i : -1;
      w.merge = merge;
      w.pad_ = 0;
      s.work.push_back(w);
    }
    if (n > 1) s.num_partials += n;
  }
  SortLongestFirst(s.work);
  CutDecodeTail(s, limits);
  return s;
}

int CutDecodeTail(DecodeSchedule& s, const DecodeScheduleLimits& limits) {
  if (limits.tail_fraction <= 0 || s.cluster > 1 || s.work.empty()) return 0;
  const int64_t per_item = std::max(1, limits.ctas_per_item);
  const int64_t items = static_cast<int64_t>(s.work.size());
  const int64_t slots = std::max(1, limits.slots);
  const int64_t waves = (items * per_item + slots - 1) / slots;
  if (waves > std::max(1, limits.tail_max_waves)) return 0;
  int64_t total = 0;
  for (const attention::DecodeWorkItem& w : s.work) total += TilesOf(w);
  const double share = static_cast<double>(total * per_item) / static_cast<double>(slots);
  const double wave_share = share / static_cast<double>(waves);
  if (wave_share < (waves > 1 ? limits.tail_min_wave_tiles : limits.tail_min_tiles)) return 0;
  const int64_t keep =
      std::max<int64_t>(1, static_cast<int64_t>((1.0 - limits.tail_fraction) * wave_share));
  // An item that is its request's only one gains a partial write and a merge when cut: in a plan
  // of one wave it is cut only from tail_min_whole_tiles a slot.
  std::vector<int32_t> items_of;
  for (const attention::DecodeWorkItem& w : s.work) {
    if (w.request >= static_cast<int32_t>(items_of.size())) items_of.resize(w.request + 1, 0);
    ++items_of[w.request];
  }
  const bool cut_whole = waves > 1 || share >= limits.tail_min_whole_tiles;
  const auto gives = [&](const attention::DecodeWorkItem& w) {
    if (!cut_whole && items_of[w.request] == 1) return int64_t{0};
    return std::max<int64_t>(0, TilesOf(w) - keep);
  };
  int64_t most_given = 0;
  for (const attention::DecodeWorkItem& w : s.work) most_given = std::max(most_given, gives(w));
  if (most_given <= 0) return 0;
  const auto pieces_of = [&](int64_t piece) {
    int64_t n = 0;
    for (const attention::DecodeWorkItem& w : s.work) n += (gives(w) + piece - 1) / piece;
    return n;
  };
  // The smallest piece (at least the wanted one) whose pieces fit the items' capacity.
  const int64_t room = int64_t(limits.max_items) - items;
  int64_t lo = limits.tail_piece > 0
                   ? limits.tail_piece
                   : std::max<int64_t>(1, static_cast<int64_t>(share / 32.0 + 0.5));
  if (lo > most_given) lo = most_given;
  if (pieces_of(most_given) > room) return 0;
  for (int64_t hi = most_given; lo < hi;) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (pieces_of(mid) <= room)
      hi = mid;
    else
      lo = mid + 1;
  }
  const int64_t piece = lo;

  // Rebuild each request's items in key order: kept parts first, then its pieces, on consecutive
  // partial slots under one merge item.
  std::vector<attention::DecodeWorkItem> by_request = s.work;
  std::stable_sort(by_request.begin(), by_request.end(), [](const auto& a, const auto& b) {
    return a.request != b.request ? a.request < b.request : a.kv_start < b.kv_start;
  });
  DecodeSchedule out;
  out.chunk = s.chunk;
  int made = 0;
  std::vector<attention::DecodeWorkItem> kept, pieces;
  for (size_t i = 0; i < by_request.size();) {
    size_t end = i;
    while (end < by_request.size() && by_request[end].request == by_request[i].request) ++end;
    kept.clear();
    pieces.clear();
    for (size_t j = i; j < end; ++j) {
      attention::DecodeWorkItem w = by_request[j];
      const int64_t give = gives(w);
      if (give <= 0) {
        kept.push_back(w);
        continue;
      }
      const int32_t item_end = w.kv_end;
      w.kv_end = w.kv_start + static_cast<int32_t>(keep * kTile);
      kept.push_back(w);
      const int64_t n = (give + piece - 1) / piece;
      int32_t at = w.kv_end;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t tiles = give / n + (k < give % n ? 1 : 0);
        attention::DecodeWorkItem p = w;
        p.kv_start = at;
        p.kv_end = k + 1 == n ? item_end : at + static_cast<int32_t>(tiles * kTile);
        at = p.kv_end;
        pieces.push_back(p);
      }
      made += static_cast<int>(n);
    }
    kept.insert(kept.end(), pieces.begin(), pieces.end());
    const int32_t n = static_cast<int32_t>(kept.size());
    const int32_t merge = n > 1 ? static_cast<int32_t>(out.merge.size()) : -1;
    if (n > 1) out.merge.push_back({kept[0].request, out.num_partials, n, 0});
    for (int32_t k = 0; k < n; ++k) {
      kept[k].partial = n > 1 ? out.num_partials + k : -1;
      kept[k].merge = merge;
      kept[k].pad_ = 0;
      out.work.push_back(kept[k]);
    }
    if (n > 1) out.num_partials += n;
    i = end;
  }
  SortLongestFirst(out.work);
  s = std::move(out);
  return made;
}

int MarkDecodeStealPairs(DecodeSchedule& s, int min_own, int min_tiles) {
  if (s.cluster > 1 || s.merge.empty()) return 0;
  std::vector<int32_t> by_partial(s.num_partials, -1);  // partial slot -> index in s.work
  for (size_t i = 0; i < s.work.size(); ++i)
    if (s.work[i].partial >= 0) by_partial[s.work[i].partial] = static_cast<int32_t>(i);
  int pairs = 0;
  for (const attention::DecodeMergeItem& m : s.merge) {
    for (int j = 0; j + 1 < m.num_partials; j += 2) {
      const int32_t fi = by_partial[m.first_partial + j], bi = by_partial[m.first_partial + j + 1];
      if (fi < 0 || bi < 0) continue;
      attention::DecodeWorkItem& f = s.work[fi];
      attention::DecodeWorkItem& b = s.work[bi];
      const int64_t ft = (f.kv_end - f.kv_start) / kTile;  // the front chunk: whole tiles
      const int64_t bt = TilesOf(b);
      if (f.kv_end != b.kv_start || (f.kv_end - f.kv_start) % kTile != 0) continue;
      const int64_t d = std::max<int64_t>(1, std::min(ft, bt) / 8);
      if (ft - d < min_own || bt - d < min_own || std::min(ft, bt) < min_tiles) continue;
      f.kv_end += static_cast<int32_t>(d * kTile);
      b.kv_start -= static_cast<int32_t>(d * kTile);
      f.pad_ = attention::kDecodeStealFront | static_cast<int32_t>(2 * d) << 2;
      b.pad_ = attention::kDecodeStealBack | static_cast<int32_t>(2 * d) << 2;
      ++pairs;
    }
  }
  return pairs;
}

DecodePersistentPlan AssignDecodeUnits(const std::vector<attention::DecodeWorkItem>& work,
                                       int ctas_per_item, int ctas) {
  DecodePersistentPlan plan;
  const int64_t n_units = static_cast<int64_t>(work.size()) * std::max(1, ctas_per_item);
  plan.ctas = static_cast<int32_t>(std::min<int64_t>(std::max(1, ctas), n_units));
  if (n_units == 0) return plan;
  // Units in the order given (items longest first, head tiles inner), each to the least loaded
  // CTA. A stable order (by the work's own sort) keeps the kv heads of an item on neighbouring
  // CTAs, which start together (as the head-major grid of one CTA per unit does).
  std::vector<int64_t> order(work.size());
  for (size_t i = 0; i < work.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return work[a].kv_end - work[a].kv_start > work[b].kv_end - work[b].kv_start;
  });
  using Entry = std::pair<double, int32_t>;  // (load, cta): the smallest first
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (int32_t c = 0; c < plan.ctas; ++c) heap.push({0.0, c});
  plan.load.assign(plan.ctas, 0.0);
  std::vector<int32_t> last(plan.ctas, -1);  // each CTA's last unit so far
  plan.units.resize(plan.ctas);
  for (attention::DecodeUnit& u : plan.units) {
    u = {};
    u.head_tile = -1;
    u.next = -1;
  }
  for (int64_t i : order) {
    const attention::DecodeWorkItem& w = work[i];
    const double cost = std::max<int64_t>(1, (w.kv_end - w.kv_start + kTile - 1) / kTile) + 1.0;
    for (int h = 0; h < std::max(1, ctas_per_item); ++h) {
      const auto [load, c] = heap.top();
      heap.pop();
      attention::DecodeUnit u = {};
      u.w = w;
      u.head_tile = h;
      u.next = -1;
      int32_t at = c;  // a CTA's first unit sits at its own index
      if (last[c] >= 0) {
        at = static_cast<int32_t>(plan.units.size());
        plan.units.push_back(u);
        plan.units[last[c]].next = at;
      } else {
        plan.units[c] = u;
      }
      last[c] = at;
      plan.load[c] = load + cost;
      heap.push({plan.load[c], c});
    }
  }
  return plan;
}

bool DefaultPersistent(int64_t units, int64_t longest_unit_tiles, int slots) {
  return units > slots && units <= 2 * int64_t(slots) && longest_unit_tiles <= 32;
}

SingleDecodeSplit ChooseSingleDecodeSplit(int64_t kv_len, const DecodeScheduleLimits& limits) {
  SingleDecodeSplit s;
  s.chunk = static_cast<int32_t>(std::max<int64_t>(kv_len, 1));
  if (limits.max_items < 2) return s;
  // One request, on the stack: SingleDecode runs this on every call (no allocation).
  const DecodeRequest one[1] = {{0, static_cast<int32_t>(kv_len), 0}};
  s.chunk = ChooseDecodeChunk(one, limits);
  s.chunks = static_cast<int32_t>(ChunksOf(one[0], s.chunk));
  s.cluster = ClusterFor(one, s.chunk, limits);
  return s;
}

}  // namespace flashjit::ops
