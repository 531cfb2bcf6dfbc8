// The diagnostic stamps variant of decode (FLASHJIT_DECODE_STAMPS, session 10) against the fp64
// reference, and its per-CTA records: ordered marks, an SM id in range, and tiles that sum to the
// batch's, on one CTA per unit (unsplit, split and merged by the last CTA, clusters), on the
// persistent grid and in a CUDA graph.
#include <algorithm>
#include <vector>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/copy.h"
#include "src/runtime/driver.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

// Plans made in this scope take the stamps variant; launches write into `buf`.
struct ForceStamps {
  ForceStamps(DeviceBuffer& buf, int64_t ctas) {
    ops::SetDecodeStampsForTesting(1);
    ops::SetDecodeStampsBuffer(buf.data(), ctas);
  }
  ~ForceStamps() {
    ops::SetDecodeStampsForTesting(-1);
    ops::SetDecodeStampsBuffer(nullptr, 0);
  }
};
// Plans made in this scope: every plan that does not cluster on the persistent grid (of at most
// `ctas` CTAs, 0: the resident capacity), or (never) none.
struct ForcePersistentGrid {
  explicit ForcePersistentGrid(int ctas, bool never = false) {
    ops::SetDecodePersistentForTesting(never ? ops::kPersistentNever : ops::kPersistentAlways,
                                       ctas);
  }
  ~ForcePersistentGrid() { ops::SetDecodePersistentForTesting(-1, 0); }
};

// One plan captured into a CUDA graph (graph mode: merges through the workspace; the persistent
// grid only when forced) and replayed twice over poisoned outputs, each replay checked against
// the fp64 reference.
void GraphRun(const BatchCase& c, std::mt19937& rng) {
  const int hq = c.num_qo_heads, d = c.head_dim, b = static_cast<int>(c.lens.size());
  PagedCache pc = BuildCache(c, rng);
  std::vector<float> q = RandomNormal(int64_t(b) * hq * d, rng);
  std::vector<double> qd;
  DeviceBuffer dq = Upload16(c.q_dtype, q, &qd), dout(int64_t(b) * hq * d * 2), dlse(b * hq * 4);
  BatchDecodeConfig cfg = ConfigFor(c, b);
  cfg.cuda_graph = true;
  auto wrapper = BatchDecode::Create(TestEngine(), cfg);
  REQUIRE(wrapper.ok());
  BatchDecode& w = **wrapper;
  DeviceBuffer ws(w.WorkspaceBytes());
  const Status planned = w.Plan(pc.indptr.data(), pc.last_len.data(), b, c.options, ws.data(),
                                ws.bytes(), nullptr, pc.page_ids.data(), pc.num_pages);
  INFO(Describe(c) << " (graph): plan " << planned.ToString());
  REQUIRE(planned.ok());
  TensorView tk, tv;
  CacheViews(c, pc, &tk, &tv);
  const TensorView tidx = TensorView::Contiguous(pc.indices.data(), DType::kI32,
                                                 {static_cast<int64_t>(pc.page_ids.size())});
  auto enqueue = [&](CUstream stream) {
    const Status s = w.Run(TensorView::Contiguous(dq.data(), c.q_dtype, {b, hq, d}), tk, tv, tidx,
                           TensorView::Contiguous(dout.data(), c.q_dtype, {b, hq, d}),
                           TensorView::Contiguous(dlse.data(), DType::kF32, {b, hq}), stream);
    INFO("run: " << s.ToString());
    REQUIRE(s.ok());
  };
  if (DryRun()) {
    enqueue(nullptr);
    return;
  }
  CapturedGraph graph;
  const Status captured = graph.Capture([&](CUstream s) {
    enqueue(s);  // REQUIREs each run's Status
    return Status::Ok();
  });
  REQUIRE(captured.ok());
  std::vector<double> ref_out, ref_lse;
  Reference(c, pc, qd, nullptr, c.options, &ref_out, &ref_lse);
  for (int replay = 0; replay < 2; ++replay) {
    dout.Fill(0xFF);
    dlse.Fill(0xFF);
    Synchronize();
    graph.Replay();
    std::vector<float> out = Download16(c.q_dtype, dout, int64_t(b) * hq * d);
    std::vector<float> lse = DownloadF32(dlse, int64_t(b) * hq);
    CheckDecode(out, ref_out, &lse, ref_lse,
                OutTolerance(c.q_dtype, DTypeBytes(c.kv_dtype) == 1, c.options.rope),
                Describe(c) + " graph replay " + std::to_string(replay));
  }
}

// Downloads the stamps of `ctas` entries and checks every written one: entry <= issued <= first
// tile <= end (globaltimer and the SM clock), entry <= record read <= past the wait <= issued
// (SM clock), an SM id below the SM count; returns the sum of the tiles the CTAs counted and the
// number of CTAs that wrote.
std::pair<int64_t, int64_t> CheckStamps(const DeviceBuffer& buf, int64_t ctas) {
  constexpr int kW = attention::kDecodeStampWords;
  std::vector<unsigned long long> h(size_t(ctas) * kW);
  buf.Download(h.data(), h.size() * 8);
  const int sms = *runtime::MultiprocessorCount(TestEngine(), 0);
  int64_t tiles = 0, written = 0;
  for (int64_t i = 0; i < ctas; ++i) {
    const unsigned long long* r = &h[size_t(i) * kW];
    if (r[0] == 0) continue;
    ++written;
    const unsigned long long lo32 = 0xffffffffull;
    INFO("cta " << i << ": " << r[0] << " " << r[1] << " " << r[2] << " " << r[3] << " cycles "
                << (r[7] & lo32) << " " << (r[7] >> 32) << " " << (r[4] & lo32) << " "
                << (r[4] >> 32) << " " << r[5] << " sm " << (r[6] & lo32));
    CHECK(r[0] <= r[1]);
    CHECK(r[1] <= r[2]);
    CHECK(r[2] <= r[3]);
    CHECK(r[3] - r[0] < 1000000000ull);  // under a second
    CHECK((r[7] & lo32) <= (r[7] >> 32));
    CHECK((r[7] >> 32) <= (r[4] & lo32));
    CHECK((r[4] & lo32) <= (r[4] >> 32));
    CHECK((r[4] >> 32) <= r[5]);
    CHECK(static_cast<int>(r[6] & lo32) < sms);
    tiles += static_cast<int64_t>(r[6] >> 32);
  }
  return {tiles, written};
}

// The tiles of a batch without a window: every (request, kv head) reads ceil(len / 64) tiles,
// however the plan splits it (chunks are whole tiles); an empty request takes none on one CTA per
// unit and one (zero-filled) on the persistent grid.
int64_t ExpectedTiles(const BatchCase& c, bool persistent) {
  int64_t t = 0;
  for (int len : c.lens) t += std::max(persistent ? 1 : 0, (len + 63) / 64);
  const int q_tiles = (c.num_qo_heads / c.num_kv_heads + 15) / 16;
  return t * c.num_kv_heads * q_tiles;
}

// The stamps variant computes what the default does, on one CTA per unit (unsplit, split and
// merged by the last CTA, clusters of 2 and 8) and on the persistent grid, over ragged batches
// (lengths 0..16384, page sizes 1/16/64, HND), and each CTA's record is ordered and counts its
// tiles: their sum is the batch's. Then CUDA graphs (workspace merges; a forced persistent grid).
TEST_CASE("batch decode: per-CTA stamps variant", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  constexpr int64_t kCtas = 1 << 14;
  DeviceBuffer buf(size_t(kCtas) * attention::kDecodeStampWords * 8);
  ForceStamps stamps(buf, kCtas);
  std::vector<BatchCase> cases;
  auto add = [&](std::vector<int> lens) { return AddCase(cases, 32, 8, std::move(lens)); };
  add({5000, 1, 16, 17, 900, 16384, 3000});  // split, merged by the last CTA
  add(std::vector<int>(16, 1024));           // clusters of 2
  add({1024});                               // a cluster of 8
  add({1024, 2000, 63, 64, 65});
  {
    BatchCase* c = add({1500, 700, 33});
    c->num_qo_heads = 34;  // group 17: two query tiles
    c->num_kv_heads = 2;
    c->page_size = 1;
  }
  for (int ps : {1, 16, 64}) {
    BatchCase* c = add(MixedLengths(ps == 1 ? 9 : 20, ps == 1 ? 3000 : 16384, ps, rng));
    c->page_size = ps;
    if (ps == 64) {
      c->layout = KVLayout::kHND;
      c->combined = false;
    }
  }
  for (int persistent = 0; persistent < 2; ++persistent) {
    for (const BatchCase& c : cases) {
      const bool uniform = std::all_of(c.lens.begin(), c.lens.end(),
                                       [&](int l) { return l == c.lens[0] && l == 1024; });
      if (persistent && uniform) continue;  // clusters are never persistent
      buf.Fill(0);
      Synchronize();
      {
        ForcePersistentGrid grid(0, /*never=*/!persistent);
        RunBatch(c, rng);
      }
      if (DryRun()) continue;
      const auto [tiles, written] = CheckStamps(buf, kCtas);
      INFO(Describe(c) << (persistent ? " persistent" : "") << ": " << written << " CTAs");
      CHECK(written > 0);
      CHECK(tiles == ExpectedTiles(c, persistent));
    }
  }
  for (int persistent = 0; persistent < 2; ++persistent) {
    buf.Fill(0);
    Synchronize();
    {
      ForcePersistentGrid grid(persistent ? 5 : 0, /*never=*/!persistent);
      GraphRun(cases[0], rng);
    }
    if (DryRun()) continue;
    const auto [tiles, written] = CheckStamps(buf, kCtas);
    INFO("graph" << (persistent ? " persistent" : "") << ": " << written << " CTAs");
    CHECK(written > 0);
    CHECK(tiles == ExpectedTiles(cases[0], persistent));
  }
}

// The small cases' batches: 4 query heads on 1 kv head; a split request beside an empty and a
// short one (merged by its last CTA), and one request of 1024 keys (split into a cluster).
BatchCase SmallSplitCase() {
  BatchCase c;
  c.num_qo_heads = 4;
  c.num_kv_heads = 1;
  c.lens = {700, 0, 33};
  return c;
}
BatchCase SmallClusterCase() {
  BatchCase c = SmallSplitCase();
  c.lens = {1024};
  return c;
}

// Small cases for compute-sanitizer: one split request merged by its last CTA, a cluster, a
// persistent grid of 3 CTAs, under the stamps variant.
TEST_CASE("batch decode: per-CTA stamps small", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  const BatchCase c = SmallSplitCase(), cl = SmallClusterCase();
  constexpr int64_t kCtas = 64;
  DeviceBuffer buf(size_t(kCtas) * attention::kDecodeStampWords * 8);
  ForceStamps stamps(buf, kCtas);
  RunBatch(c, rng);
  RunBatch(cl, rng);
  ForcePersistentGrid grid(3);
  RunBatch(c, rng);
  if (!DryRun()) CHECK(CheckStamps(buf, kCtas).second > 0);
}

// Plans made in this scope find the CTA's item and head tile with (1) or without (0) the
// launch's divisors (session 11's form; the default is on).
struct ForceFastIndex {
  explicit ForceFastIndex(int mode) { ops::SetDecodeFastIndexForTesting(mode); }
  ~ForceFastIndex() { ops::SetDecodeFastIndexForTesting(-1); }
};

// Both forms of the CTA's index (from the launch's divisors, session 11, and by run-time
// divisions) against the fp64 reference: a split request merged by its last CTA with an empty
// one, a cluster of 8, a persistent grid of 3 CTAs, fp8 KV, page size 1 with two query tiles, and
// a CUDA graph. Small enough for compute-sanitizer.
TEST_CASE("batch decode: CTA index forms small", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  const BatchCase c = SmallSplitCase(), cl = SmallClusterCase();
  BatchCase f8 = c;
  f8.kv_dtype = DType::kF8E4M3;
  BatchCase p1 = c;
  p1.num_qo_heads = 34;
  p1.num_kv_heads = 2;
  p1.page_size = 1;
  p1.lens = {300, 65, 1};
  for (int fast = 0; fast < 2; ++fast) {
    ForceFastIndex form(fast);
    INFO("fast_index " << fast);
    RunBatch(c, rng);
    RunBatch(cl, rng);
    RunBatch(f8, rng);
    RunBatch(p1, rng);
    {
      ForcePersistentGrid grid(3);
      RunBatch(c, rng);
    }
    GraphRun(c, rng);
  }
}

}  // namespace
}  // namespace flashjit::test
