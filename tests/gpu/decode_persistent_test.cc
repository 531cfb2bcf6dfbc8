// BatchDecode on the persistent grid and under CUDA graph replay, against the fp64 reference:
// a graph captured once replays after new plans (also on a forced persistent grid), short units
// and merges inside the loop, ragged batches of 0..16384 keys on forced small grids.
#include <algorithm>
#include <numeric>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/copy.h"
#include "src/runtime/driver.h"
#include "tests/gpu/decode_batch_util.h"

namespace flashjit::test {
namespace {

// A graph-mode wrapper and the plans replayed through one capture: (batch, length cut).
struct GraphCase {
  int num_qo_heads = 16, num_kv_heads = 4, max_b = 16, max_len = 6000;
  std::vector<std::pair<int, int>> plans = {{12, 6000}, {16, 300}, {5, 6000}, {16, 100000}};
  std::vector<int> lens;  // the requests' lengths (empty: MixedLengths up to max_len)
  // The wrapper launches the merge kernel on every replay: some plans must take it, some not.
  bool merge_kernel = false;
  // > 0: the wrapper launches every replay in clusters of this size (ops::DecodeGraphCluster,
  // at most `cluster` by the test hook): some plans must merge in them, some not.
  int cluster = 0;
};

// A CUDA graph captured once replays correctly after plans of other lengths and batch sizes
// (with `forced_ctas` > 0: under a forced persistent grid of at most that many CTAs).
void GraphReplay(std::mt19937& rng, int forced_ctas, const GraphCase& g = {}) {
  BatchCase c;
  c.num_qo_heads = g.num_qo_heads;
  c.num_kv_heads = g.num_kv_heads;
  const int max_b = g.max_b;
  c.lens = g.lens.empty() ? MixedLengths(max_b, g.max_len, 16, rng) : g.lens;
  PagedCache pc = BuildCache(c, rng);  // the cache of the largest batch; plans use prefixes
  const int hq = c.num_qo_heads, d = c.head_dim;
  std::vector<float> q = RandomNormal(int64_t(max_b) * hq * d, rng);
  std::vector<double> qd;
  DeviceBuffer dq = Upload16(c.q_dtype, q, &qd), dout(int64_t(max_b) * hq * d * 2),
               dlse(max_b * hq * 4);
  BatchDecodeConfig cfg;
  cfg.num_qo_heads = hq;
  cfg.num_kv_heads = c.num_kv_heads;
  cfg.head_dim = d;
  cfg.page_size = c.page_size;
  cfg.max_batch_size = max_b;
  cfg.cuda_graph = true;
  if (g.cluster > 0) ops::SetDecodeGraphClusterForTesting(g.cluster);
  auto wrapper = BatchDecode::Create(TestEngine(), cfg);
  ops::SetDecodeGraphClusterForTesting(-1);
  REQUIRE(wrapper.ok());
  BatchDecode& w = **wrapper;
  DeviceBuffer ws(w.WorkspaceBytes());
  TensorView tk, tv;
  CacheViews(c, pc, &tk, &tv);
  const TensorView tq = TensorView::Contiguous(dq.data(), c.q_dtype, {max_b, hq, d});
  const TensorView tout = TensorView::Contiguous(dout.data(), c.q_dtype, {max_b, hq, d});
  const TensorView tlse = TensorView::Contiguous(dlse.data(), DType::kF32, {max_b, hq});
  const TensorView tidx = TensorView::Contiguous(pc.indices.data(), DType::kI32,
                                                 {static_cast<int64_t>(pc.page_ids.size())});
  // A plan beyond the fixed limits is refused.
  std::vector<int32_t> big_indptr(max_b + 2, 0), big_last(max_b + 1, 0);
  Status refused = w.Plan(big_indptr.data(), big_last.data(), max_b + 1, {}, ws.data(), ws.bytes());
  CHECK(refused.code() == StatusCode::kInvalidArgument);

  // Plans for a prefix of the batch: lengths are cut so that each plan schedules differently.
  CUstream plan_stream = nullptr;
  auto plan = [&](int b, int cut) {
    BatchCase sub = c;
    sub.lens.resize(b);
    std::vector<int32_t> indptr(pc.indptr.begin(), pc.indptr.begin() + b + 1);
    std::vector<int32_t> last(std::max(b, 0));  // b >= 0; the max quiets GCC's size warning
    for (int r = 0; r < b; ++r) {
      sub.lens[r] = std::min(c.lens[r], cut);
      const int pages = (sub.lens[r] + c.page_size - 1) / c.page_size;
      indptr[r + 1] = indptr[r] + pages;
      last[r] = pages ? sub.lens[r] - (pages - 1) * c.page_size : 0;
    }
    // The prefix keeps each request's first pages: rebuild page ids in the same order.
    PagedCache view;
    view.indptr = indptr;
    view.page_ids.clear();
    for (int r = 0; r < b; ++r)
      for (int p = 0; p < indptr[r + 1] - indptr[r]; ++p)
        view.page_ids.push_back(pc.page_ids[pc.indptr[r] + p]);
    Status s = w.Plan(indptr.data(), last.data(), b, {}, ws.data(), ws.bytes(), plan_stream);
    INFO(s.ToString());
    REQUIRE(s.ok());
    return std::make_pair(sub, std::move(view));
  };
  auto check = [&](const BatchCase& sub, PagedCache& view, int b) {
    view.host_k = pc.host_k;
    view.host_v = pc.host_v;
    std::vector<double> ref_out, ref_lse;
    std::vector<double> qb(qd.begin(), qd.begin() + int64_t(b) * hq * d);
    Reference(sub, view, qb, nullptr, {}, &ref_out, &ref_lse);
    std::vector<float> out = Download16(c.q_dtype, dout, int64_t(b) * hq * d);
    std::vector<float> lse = DownloadF32(dlse, int64_t(b) * hq);
    CheckDecode(out, ref_out, &lse, ref_lse, OutTolerance(c.q_dtype, false, false),
                "graph " + Describe(sub));
  };
  // The kv_indices a plan's prefix uses must sit where its indptr points: upload per plan.
  auto upload_indices = [&](const PagedCache& view) {
    if (!view.page_ids.empty()) pc.indices.Upload(view.page_ids.data(), view.page_ids.size() * 4);
  };

  auto [sub1, view1] = plan(g.plans[0].first, g.plans[0].second);
  upload_indices(view1);
  REQUIRE(w.Run(tq, tk, tv, tidx, tout, tlse).ok());  // warm-up outside the capture
  if (DryRun()) return;
  Synchronize();
  CapturedGraph graph;
  plan_stream = graph.stream();
  const Status captured =
      graph.Capture([&](CUstream s) { return w.Run(tq, tk, tv, tidx, tout, tlse, s); });
  INFO(captured.ToString());
  REQUIRE(captured.ok());
  int kernel_merged = 0, clustered = 0;  // plans that took the merge kernel, clusters
  for (auto [b, cut] : g.plans) {
    auto [sub, view] = plan(b, cut);
    upload_indices(view);
    {
      const PlanHeader h = DownloadPlanHeader(ws);
      INFO("graph plan B=" << b << " cut " << cut << ": cluster " << h.cluster);
      kernel_merged += h.kernel_merge > 0;
      clustered += h.cluster > 0;
      if (g.cluster > 0) CHECK((h.cluster == 0 || h.cluster == g.cluster));
    }
    if (forced_ctas > 0) {  // the replayed launch runs the persistent form
      const PlanHeader h = DownloadPlanHeader(ws);
      INFO("graph plan B=" << b << " cut " << cut << ": persistent CTAs " << h.persistent_ctas);
      CHECK(h.persistent_ctas == std::min(forced_ctas, h.work * c.num_kv_heads));
    }
    dout.Fill(0xFF);
    dlse.Fill(0xFF);
    Synchronize();
    graph.Replay();
    check(sub, view, b);
  }
  if (g.merge_kernel) {
    CHECK(kernel_merged > 0);
    CHECK(kernel_merged < static_cast<int>(g.plans.size()));  // its launch exited at once
  }
  if (g.cluster > 0) {  // clustered plans, and plans that ran unmerged in the clusters
    CHECK(clustered > 0);
    CHECK(clustered < static_cast<int>(g.plans.size()));
  }
}

TEST_CASE("batch decode: a CUDA graph captured once replays correctly after new plans",
          "[gpu][decode]") {
  std::mt19937 rng(Seed());
  GraphReplay(rng, 0);
  // One kv head, batches of up to 4: the wrapper launches the merge kernel on every replay (it
  // exits at once for the short plan that does not split).
  GraphCase g;
  g.num_qo_heads = 8;
  g.num_kv_heads = 1;
  g.max_b = 4;
  g.lens = {16000, 9000, 12001, 5000};
  g.plans = {{1, 16000}, {4, 100}, {4, 16000}, {2, 3000}, {1, 100000}};
  g.merge_kernel = true;
  GraphReplay(rng, 0, g);
}

// Graph mode in thread-block clusters (session 16): a wrapper launches every replay in clusters
// of one size, and its plans merge in them where every request splits into that many chunks;
// the other plans (unsplit, mixed chunk counts, merged through the workspace or by the merge
// kernel) run in the same clusters unmerged by them.
TEST_CASE("batch decode: a CUDA graph in thread-block clusters replays correctly after new plans",
          "[gpu][decode]") {
  std::mt19937 rng(Seed());
  {
    // The benchmark's heads, batches of up to 16: clusters of 2 (the default size).
    GraphCase g;
    g.num_qo_heads = 32;
    g.num_kv_heads = 8;
    g.max_b = 16;
    g.lens = std::vector<int>(16, 3000);
    g.lens[15] = 500;
    g.plans = {{16, 1024}, {16, 100}, {15, 3000}, {16, 3000}, {1, 2048}, {15, 1024}, {16, 600}};
    g.cluster = 2;
    GraphReplay(rng, 0, g);
  }
  {
    // One kv head, batches of up to 4, clusters of 8 (forced): the wrapper also launches the
    // merge kernel on every replay.
    GraphCase g;
    g.num_qo_heads = 8;
    g.num_kv_heads = 1;
    g.max_b = 4;
    g.lens = {16000, 1024, 1024, 1024};
    g.plans = {{1, 1024}, {4, 100}, {1, 16000}, {4, 1024}, {3, 700}, {1, 200}, {4, 16000}};
    g.cluster = 8;
    g.merge_kernel = true;
    GraphReplay(rng, 0, g);
  }
}

// Forces the persistent form (every plan of a 16-bit cache that does not cluster) with at most
// `ctas` CTAs for wrappers created in this scope.
struct ForcePersistent {
  explicit ForcePersistent(int ctas) {
    ops::SetDecodePersistentForTesting(ops::kPersistentAlways, ctas);
  }
  ~ForcePersistent() { ops::SetDecodePersistentForTesting(-1, 0); }
};

// The persistent grid on small batches (short enough for compute-sanitizer racecheck): 3 CTAs
// with many short units each, a request split and merged by its last CTA inside the loop, empty
// requests, RoPE, ALiBi, a window with sinks, head dim 64, two query tiles. (The graph case
// forced onto a persistent grid follows it.)
TEST_CASE("batch decode: persistent grid, short units and merges", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  {
    ForcePersistent force(3);
    std::vector<BatchCase> cases;
    auto add = [&](std::vector<int> lens) { return AddCase(cases, 8, 2, std::move(lens)); };
    add({1500, 0, 1, 17, 64, 65, 200});  // the long one splits: merged inside the loop
    add({300, 129, 0})->options.rope = true;
    add({250, 100, 33})->options.alibi = true;
    {
      BatchCase* c = add({700, 90, 5});
      c->options.window_left = 100;
      c->sinks = true;
      c->q_dtype = c->kv_dtype = DType::kF16;
    }
    add({400, 64, 3})->head_dim = 64;
    {
      BatchCase* c = add({300, 20});
      c->num_qo_heads = 34;  // group 17
    }
    for (BatchCase c : cases) {
      c.expect_persistent = 3;
      RunBatch(c, rng);
    }
  }
}

TEST_CASE("batch decode: a CUDA graph replays correctly on a forced persistent grid",
          "[gpu][decode]") {
  std::mt19937 rng(Seed());
  ForcePersistent force(5);
  GraphReplay(rng, 5);
}

// The persistent grid: resident CTAs walk lists of (work item, head tile) units with one
// pipeline across unit boundaries. Forced over ragged batches (lengths 0 .. 16384: empty
// requests, single keys, page boundaries, long requests split and merged by their last CTA
// inside the loop), on small grids (7 CTAs: dozens of units each, merges of many partials) and
// at the resident capacity; every 16-bit head dim, page sizes 1/16/64, layouts, GQA 1/4/5/8/17,
// the knobs, logits near -500000; each plan's header is checked to be persistent (fp8 never is).
TEST_CASE("batch decode: persistent grid over ragged batches", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  auto sms = runtime::MultiprocessorCount(TestEngine(), 0);
  REQUIRE(sms.ok());
  for (int ctas : {7, 0}) {
    ForcePersistent force(ctas);
    std::vector<BatchCase> cases;
    auto add = [&](std::vector<int> lens) { return AddCase(cases, 32, 8, std::move(lens)); };
    add(MixedLengths(24, 16384, 16, rng));
    add({16384, 0, 1, 5000, 64, 65, 0});
    {
      BatchCase* c = add(MixedLengths(9, 3000, 1, rng));
      c->num_qo_heads = c->num_kv_heads = 4;
      c->page_size = 1;
    }
    {
      BatchCase* c = add(MixedLengths(20, 5000, 64, rng));
      c->num_qo_heads = 16;
      c->num_kv_heads = 2;
      c->page_size = 64;
      c->layout = KVLayout::kHND;
      c->combined = false;
    }
    {
      BatchCase* c = add(MixedLengths(12, 4000, 16, rng));
      c->q_dtype = c->kv_dtype = DType::kF16;
      c->num_qo_heads = 16;
      c->num_kv_heads = 4;
      c->options.logits_soft_cap = 5.f;
      c->options.sm_scale = 0.5f;
      c->options.window_left = 300;
      c->sinks = true;
    }
    {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->num_qo_heads = 10;  // group 5
      c->num_kv_heads = 2;
      c->options.alibi = true;
      c->with_lse = false;
    }
    {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->q_dtype = c->kv_dtype = DType::kF16;
      c->options.rope = true;
    }
    for (int d : {64, 256}) {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->head_dim = d;
      c->num_qo_heads = 16;
      c->num_kv_heads = 2;
    }
    {
      BatchCase* c = add(MixedLengths(8, 3000, 16, rng));
      c->num_qo_heads = 34;  // group 17: two query tiles per kv head
      c->num_kv_heads = 2;
    }
    {
      BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
      c->huge_negative = true;
      c->with_lse = false;
    }
    add({0, 0, 0});
    for (BatchCase c : cases) {
      // At most `ctas` CTAs, else the persistent kernel's resident capacity (SMs x its CTAs per
      // SM).
      c.expect_persistent =
          ctas > 0 ? ctas
                   : *sms * ops::DecodePersistentCtasPerSm(c.head_dim, DTypeBytes(c.kv_dtype));
      RunBatch(c, rng);
    }
    BatchCase fp8 = cases[0];  // fp8 KV keeps one CTA per unit
    fp8.kv_dtype = DType::kF8E4M3;
    fp8.lens = MixedLengths(10, 3000, 16, rng);
    fp8.expect_persistent = 0;
    RunBatch(fp8, rng);
  }
}

// Forces programmatic dependent launch (FLASHJIT_DECODE_PDL) for launches in this scope.
struct ForcePdl {
  explicit ForcePdl(int mode) { ops::SetDecodePdlForTesting(mode); }
  ~ForcePdl() { ops::SetDecodePdlForTesting(-1); }
};

// Three runs of one plan queued back to back, each taking the previous run's output as its q
// (out and q are both [B, Hq, D]), so that a run reading q (or anything after the
// griddepcontrol.wait) before the previous kernel's end would read the 0xFF fill (NaN) or a
// stale value; the split requests' counters are reused by each run. On a stream, or (graph)
// captured into one CUDA graph and replayed twice. Each run is checked against the fp64
// reference of the previous run's downloaded output.
void PdlChain(BatchCase c, std::mt19937& rng, bool graph) {
  const int hq = c.num_qo_heads, d = c.head_dim, b = static_cast<int>(c.lens.size());
  constexpr int kRuns = 3;
  PagedCache pc = BuildCache(c, rng);
  std::vector<float> q = RandomNormal(int64_t(b) * hq * d, rng);
  std::vector<double> qd;
  DeviceBuffer dq = Upload16(c.q_dtype, q, &qd);
  std::vector<DeviceBuffer> douts;
  for (int k = 0; k < kRuns; ++k) douts.emplace_back(int64_t(b) * hq * d * 2);
  DeviceBuffer dlse(b * hq * 4);
  BatchDecodeConfig cfg = ConfigFor(c, b);
  cfg.cuda_graph = graph;
  auto wrapper = BatchDecode::Create(TestEngine(), cfg);
  REQUIRE(wrapper.ok());
  BatchDecode& w = **wrapper;
  DeviceBuffer ws(w.WorkspaceBytes());
  const Status planned = w.Plan(pc.indptr.data(), pc.last_len.data(), b, c.options, ws.data(),
                                ws.bytes(), nullptr, pc.page_ids.data(), pc.num_pages);
  INFO(Describe(c) << (graph ? " (graph)" : "") << ": plan " << planned.ToString());
  REQUIRE(planned.ok());
  TensorView tk, tv;
  CacheViews(c, pc, &tk, &tv);
  const TensorView tidx = TensorView::Contiguous(pc.indices.data(), DType::kI32,
                                                 {static_cast<int64_t>(pc.page_ids.size())});
  auto view = [&](DeviceBuffer& buf) {
    return TensorView::Contiguous(buf.data(), c.q_dtype, {b, hq, d});
  };
  const TensorView tlse = TensorView::Contiguous(dlse.data(), DType::kF32, {b, hq});
  auto enqueue = [&](CUstream stream) {
    for (int k = 0; k < kRuns; ++k) {
      const Status s = w.Run(view(k == 0 ? dq : douts[k - 1]), tk, tv, tidx, view(douts[k]),
                             k + 1 == kRuns ? tlse : TensorView{}, stream);
      INFO("run " << k << ": " << s.ToString());
      REQUIRE(s.ok());
    }
  };
  auto fill = [&] {
    for (DeviceBuffer& o : douts) o.Fill(0xFF);
    dlse.Fill(0xFF);
    Synchronize();
  };
  auto check = [&](const std::string& what) {
    std::vector<double> qk = qd;
    for (int k = 0; k < kRuns; ++k) {
      std::vector<double> ref_out, ref_lse;
      Reference(c, pc, qk, nullptr, c.options, &ref_out, &ref_lse);
      std::vector<float> out = Download16(c.q_dtype, douts[k], int64_t(b) * hq * d);
      std::vector<float> lse = DownloadF32(dlse, int64_t(b) * hq);
      CheckDecode(out, ref_out, k + 1 == kRuns ? &lse : nullptr, ref_lse,
                  OutTolerance(c.q_dtype, DTypeBytes(c.kv_dtype) == 1, c.options.rope),
                  what + " run " + std::to_string(k));
      qk.assign(out.begin(), out.end());  // the next run's q, exactly as the GPU holds it
    }
  };
  if (DryRun()) {
    enqueue(nullptr);
    return;
  }
  const std::string what = Describe(c) + (graph ? " graph" : " stream");
  if (!graph) {
    fill();
    enqueue(nullptr);
    Synchronize();
    check(what);
    return;
  }
  CapturedGraph replayed;
  const Status captured = replayed.Capture([&](CUstream s) {
    enqueue(s);  // REQUIREs each run's Status
    return Status::Ok();
  });
  REQUIRE(captured.ok());
  for (int replay = 0; replay < 2; ++replay) {
    fill();
    replayed.Replay();
    check(what + " replay " + std::to_string(replay));
  }
}

// Programmatic dependent launch forced on (session 9's FLASHJIT_DECODE_PDL=1): chained runs
// over ragged batches (lengths 0..16384, page sizes 1/16/64; long requests split and merged by
// their last CTA, the counters reused by the next run), uniform batches merged by clusters of 2,
// 8 and 16, the persistent grid, fp8 KV, RoPE, and CUDA graphs of the chain (workspace merges;
// a forced persistent grid).
TEST_CASE("batch decode: programmatic dependent launch over chained runs", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  ForcePdl pdl(1);
  std::vector<BatchCase> cases;
  auto add = [&](std::vector<int> lens) { return AddCase(cases, 32, 8, std::move(lens)); };
  add(MixedLengths(20, 16384, 16, rng));
  {
    BatchCase* c = add(MixedLengths(9, 3000, 1, rng));
    c->num_qo_heads = c->num_kv_heads = 4;
    c->page_size = 1;
  }
  {
    BatchCase* c = add(MixedLengths(12, 5000, 64, rng));
    c->num_qo_heads = 16;
    c->num_kv_heads = 2;
    c->page_size = 64;
    c->layout = KVLayout::kHND;
    c->combined = false;
  }
  add(std::vector<int>(16, 1024));  // clusters of 2
  add({1024});                      // a cluster of 8
  {
    BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
    c->kv_dtype = DType::kF8E4M3;
  }
  {
    BatchCase* c = add(MixedLengths(10, 3000, 16, rng));
    c->q_dtype = c->kv_dtype = DType::kF16;
    c->options.rope = true;
  }
  for (const BatchCase& c : cases) PdlChain(c, rng, false);
  {
    ops::SetDecodeMaxClusterForTesting(16);
    BatchCase c = cases[4];  // one request of 1024 keys: a cluster of 16
    PdlChain(c, rng, false);
    ops::SetDecodeMaxClusterForTesting(0);
  }
  {
    ForcePersistent force(0);
    PdlChain(cases[0], rng, false);
    PdlChain(cases[3], rng, false);  // clusters: never persistent
    BatchCase c = cases[0];
    c.lens = MixedLengths(64, 1500, 16, rng);  // 512 units on the persistent grid
    PdlChain(c, rng, false);
  }
  PdlChain(cases[0], rng, true);
  {
    ForcePersistent force(5);
    PdlChain(cases[2], rng, true);
  }
}

// A small chain for compute-sanitizer: one split request merged by its last CTA, a cluster.
TEST_CASE("batch decode: programmatic dependent launch small", "[gpu][decode]") {
  std::mt19937 rng(Seed());
  ForcePdl pdl(1);
  BatchCase c;
  c.num_qo_heads = 4;
  c.num_kv_heads = 1;
  c.lens = {700, 0, 33};
  PdlChain(c, rng, false);
  c.lens = {1024};
  PdlChain(c, rng, false);
}

}  // namespace
}  // namespace flashjit::test
