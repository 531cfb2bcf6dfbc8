// The form of BatchDecode's plans (CPU, no GPU): where split requests are merged by the merge
// kernel (session 15), and how graph-mode wrappers launch: in clusters of one size, over a grid
// of one wave of split items or four (session 16).
#include <flashjit/decode.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

// Session 15: split requests of one-wave plans with at least 8 chunks a request are merged by
// the merge kernel (a CTA per request, query head and 32 columns) where the model prices it
// below the last CTA's merge; one kv head at B=1 then splits over 64-128 CTAs instead of 32.
// Not in plans of more than one wave, for 2-7 chunks, under FLASHJIT_DECODE_MERGE=fused, or in
// graph mode beyond small batches and groups under 4 (ops::DecodeGraphMergeKernel).
TEST_CASE("decode plans: the merge kernel where the last CTA's merge would be long", "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_PLAN_MODEL") || std::getenv("FLASHJIT_DECODE_PERSISTENT") ||
      std::getenv("FLASHJIT_DECODE_MERGE") || std::getenv("FLASHJIT_DECODE_CHUNK") ||
      std::getenv("FLASHJIT_DECODE_STAGES")) {
    WARN("a decode plan knob is set: the default plans are not checked");
    return;
  }
  auto engine = test::MakeTestEngine("");
  auto plan = [&](int hq, int hkv, DType kv, int b, int len, bool graph, int max_b = 0) {
    BatchDecodeConfig c;
    c.num_qo_heads = hq;
    c.num_kv_heads = hkv;
    c.kv_dtype = kv;
    c.max_batch_size = std::max(b, max_b);
    c.cuda_graph = graph;
    ops::DecodeScheduleLimits l = ops::BatchDecodeLimits(*engine, c, 132);
    l.max_items = ops::DecodeMaxItems(b, l);
    const ops::DecodeSchedule sched =
        ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(b, {0, len, 0}), l);
    const ops::DecodePlanForm form = ops::ChooseDecodePlanForm(c, ops::kPersistentAuto, sched, l);
    return std::pair{sched, form};
  };
  {
    const auto [sched, form] = plan(8, 1, DType::kBF16, 1, 16384, false);  // tp8 B=1 L=16k
    CHECK(form.merge_kernel);
    CHECK(sched.work.size() >= 64);
    CHECK(sched.work.size() <= 132);
  }
  for (int len : {4096, 16384}) {
    // Graph mode: a wrapper of batches up to 33 x 8 x 1 <= 264 launches the merge kernel on every
    // replay, one of 34 does not (its plans keep the last CTA's merge and its price: 32 chunks).
    INFO("graph mode, L=" << len);
    const auto [sched, form] = plan(8, 1, DType::kBF16, 1, len, true, 33);
    CHECK(form.merge_kernel);
    CHECK(sched.work.size() >= 64);
    const auto [sched2, form2] = plan(8, 1, DType::kBF16, 1, len, true, 34);
    CHECK_FALSE(form2.merge_kernel);
    CHECK(sched2.work.size() == 32);
    // Groups of 1 and 2 (mha, Gemma-2's 16 / 8) keep the last CTA's merge in graph mode.
    CHECK_FALSE(plan(32, 32, DType::kBF16, 1, len, true).second.merge_kernel);
    CHECK_FALSE(plan(16, 8, DType::kBF16, 1, len, true).second.merge_kernel);
    CHECK(plan(16, 4, DType::kBF16, 1, len, true).second.merge_kernel);  // group 4
  }
  {
    const auto [sched, form] = plan(32, 8, DType::kF8E4M3, 64, 4096, false);  // 4 waves
    CHECK(sched.merge.size() == 64);
    CHECK_FALSE(form.merge_kernel);
  }
  {
    const auto [sched, form] = plan(32, 8, DType::kBF16, 16, 16384, false);  // 2 chunks each
    CHECK(sched.merge.size() == 16);
    CHECK_FALSE(form.merge_kernel);
  }
  {
    ops::SetDecodeMergeForTesting(ops::kMergeFused);
    const auto [sched, form] = plan(8, 1, DType::kBF16, 1, 16384, false);
    ops::SetDecodeMergeForTesting(-1);
    CHECK_FALSE(form.merge_kernel);
    CHECK(sched.work.size() == 32);
  }
  ops::DecodeScheduleLimits l;
  l.merge_rows_per_warp = 2;
  l.merge_kernel_base = 1.1;
  bool kernel = false;
  CHECK(ops::DecodeMergeCost(128, 1, l, &kernel) == Approx(1.1));
  CHECK(kernel);
  CHECK(ops::DecodeMergeCost(129, 1, l, &kernel) == Approx(1.6));
  ops::DecodeMergeCost(128, 2, l, &kernel);
  CHECK_FALSE(kernel);
  ops::DecodeMergeCost(7, 1, l, &kernel);
  CHECK_FALSE(kernel);
}

// Session 16: a graph-mode wrapper launches every replay in clusters of one size (2 by default,
// 4 or 8 by the knob), where max_batch_size requests in that many chunks fit one round of the
// slots; its plans merge in the clusters only where every request splits into exactly that many
// chunks (the GPU case "a CUDA graph in thread-block clusters ..." replays these plans).
// Session 18: fp8 caches at D 128 price the last wave by its CTAs an SM and the last CTA's merge
// at 6 tiles or more (ops::BatchDecodeLimits). A lone CTA's tile costs 0.75, or 0.8 where the
// merge kernel follows (that launch keeps PDL, whose waiting CTAs crowd lone ones) and in graph
// mode. 16-bit caches and fp8 at D 64 / 256 keep the s13 model.
TEST_CASE("decode plans: fp8 caches and the last wave", "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_PLAN_MODEL") || std::getenv("FLASHJIT_DECODE_CHUNK")) {
    WARN("a decode plan knob is set: the default plans are not checked");
    return;
  }
  auto engine = test::MakeTestEngine("");
  auto plan = [&](DType kv, int d, int b, int len, bool graph = false, int hkv = 8, int hq = 32) {
    BatchDecodeConfig c;
    c.num_qo_heads = hq;
    c.num_kv_heads = hkv;
    c.head_dim = d;
    c.kv_dtype = kv;
    c.max_batch_size = 256;
    c.cuda_graph = graph;
    ops::DecodeScheduleLimits l = ops::BatchDecodeLimits(*engine, c, 132);
    CHECK(l.price_last_wave == (DTypeBytes(kv) == 1 && d == 128));
    l.max_items = ops::BatchDecodeMaxItems(c, l);
    const ops::DecodeSchedule s =
        ops::BuildDecodeSchedule(std::vector<ops::DecodeRequest>(b, {0, len, 0}), l);
    return std::pair{s.chunk, ops::ChooseDecodePlanForm(c, ops::kPersistentAuto, s, l)};
  };
  auto chunk = [&](DType kv, int d, int b, int len, bool graph = false) {
    return plan(kv, d, b, len, graph).first;
  };
  constexpr DType kE4m3 = DType::kF8E4M3;
  // Measured on the H200, queued us, the s13 model's plan first (session 18, call 1):
  CHECK(chunk(kE4m3, 128, 64, 1024) == 1024);   // 67.07 split in 2, 53.66 unsplit
  CHECK(chunk(kE4m3, 128, 64, 512) == 512);     // 48.51 split in 2, 34.73 unsplit
  CHECK(chunk(kE4m3, 128, 64, 2048) == 1024);   // 105.85 in 3, 98.83 in 2
  CHECK(chunk(kE4m3, 128, 16, 16384) == 5504);  // one wave of 3 chunks
  // Call 5 (a lone tile at 0.8 first; queued / back to back): 128 lone CTAs, no PDL, 23.11 /
  // 21.64 against 3 chunks 24.75 / 22.18; in graph mode (0.8) the 3 chunks stay.
  CHECK(chunk(kE4m3, 128, 16, 1024) == 1024);
  CHECK(chunk(kE4m3, 128, 16, 1024, true) == 384);
  CHECK(chunk(kE4m3, 128, 64, 4096) == 2048);  // 171.45 / 166.17 in 3, 164.78 / 159.53 in 2
  // tp8 B=256 L=4k: 256 CTAs unsplit, no PDL, 85.84 / 83.64 against 3 chunks 94.24 / 89.62.
  CHECK(plan(kE4m3, 128, 256, 4096, false, 1, 8).first == 4096);
  // B=1 L=16k: the merge kernel follows either plan, so lone tiles cost 0.8 and the plan keeps
  // 43 chunks of 384 keys: 256 CTAs of 512 read 23.00 queued but 23.54 back to back against
  // 24.81 / 21.30.
  const auto [c1, f1] = plan(kE4m3, 128, 1, 16384);
  CHECK(c1 == 384);
  CHECK(f1.merge_kernel);
  // fp8 at D 64 and 16-bit KV: the s13 model's plans.
  CHECK(chunk(kE4m3, 64, 16, 1024) == 256);
  CHECK(chunk(DType::kBF16, 128, 16, 1024) == 512);
  CHECK(chunk(DType::kBF16, 128, 64, 1024) == 1024);
}

// Sessions 22-23: where the default tail rule (DecodeTailKnob) cuts the plans of the H200's
// 132 SMs: one-wave plans of >= 96 tiles a slot (192 for pages of under 16 keys and at D 256),
// whole requests there from 384 tiles (16-bit caches) or 192 (fp8), two-wave plans of >= 192
// tiles a wave; never where a slot is an SM (D 256 with a 16-bit cache) or in graph mode.
TEST_CASE("decode plans: where the default tail rule cuts", "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_TAIL") || std::getenv("FLASHJIT_DECODE_PLAN_MODEL") ||
      std::getenv("FLASHJIT_DECODE_CHUNK")) {
    WARN("a decode plan knob is set: the default plans are not checked");
    return;
  }
  auto engine = test::MakeTestEngine("");
  // Whether the default knob's plan has more items than the plan without pieces.
  auto cuts = [&](DType kv, int d, int hq, int hkv, int b, int len, bool graph = false,
                  int page = 16) {
    BatchDecodeConfig c;
    c.page_size = page;
    c.num_qo_heads = hq;
    c.num_kv_heads = hkv;
    c.head_dim = d;
    c.kv_dtype = kv;
    c.max_batch_size = b;
    c.cuda_graph = graph;
    ops::DecodeScheduleLimits l = ops::BatchDecodeLimits(*engine, c, 132);
    l.max_items = ops::BatchDecodeMaxItems(c, l);
    const std::vector<ops::DecodeRequest> req(b, {0, len, 0});
    const size_t cut = ops::BuildDecodeSchedule(req, l).work.size();
    l.tail_fraction = 0;
    return cut > ops::BuildDecodeSchedule(req, l).work.size();
  };
  constexpr DType kBf16 = DType::kBF16, kE4m3 = DType::kF8E4M3;
  // Split requests of one wave (session 22: B=16 L=32k -0.9 %, B=16 L=16k -0.5 %).
  CHECK(cuts(kBf16, 128, 32, 8, 16, 32768));
  CHECK(cuts(kBf16, 128, 32, 8, 16, 16384));
  // Whole requests: 124 tiles a slot lost (B=32 L=8k +1.3 %, qwen7b B=64 L=8k +2.6 %), as did 248
  // for 16-bit caches (qwen7b B=64 L=16k +0.7 %); 496 won (B=32 L=32k -1.2 %).
  CHECK_FALSE(cuts(kBf16, 128, 32, 8, 32, 8192));
  CHECK_FALSE(cuts(kBf16, 128, 28, 4, 64, 8192));
  CHECK_FALSE(cuts(kBf16, 128, 28, 4, 64, 16384));
  CHECK(cuts(kBf16, 128, 32, 8, 32, 32768));
  // fp8 (396 slots): B=16 L=32k -1.2 %, B=48 L=16k (whole, 248 tiles) -1.1 %; B=48 L=8k (whole,
  // 124) +1.5 % left alone.
  CHECK(cuts(kE4m3, 128, 32, 8, 16, 32768));
  CHECK(cuts(kE4m3, 128, 32, 8, 48, 16384));
  CHECK_FALSE(cuts(kE4m3, 128, 32, 8, 48, 8192));
  // Two waves of >= 192 tiles a wave (B=64 L=32k -1.7 %), not of 124 (B=64 L=8k +0.6 %).
  CHECK(cuts(kBf16, 128, 32, 8, 64, 32768));
  CHECK_FALSE(cuts(kBf16, 128, 32, 8, 64, 8192));
  // D 256, one CTA an SM (16-bit): gemma2 lost at every shape cut (bf16 +0.6-2.7 %).
  CHECK_FALSE(cuts(kBf16, 256, 16, 8, 16, 16384));
  CHECK_FALSE(cuts(kBf16, 256, 16, 8, 16, 32768));
  // fp8 at D 256, two CTAs an SM (session 24, against no pieces): one-wave plans from 192 tiles a
  // slot (B=16 L=16k and B=8 L=32k, 128 tiles, lost 1.1 / 1.9 %; B=16 L=32k, 256, won 0.6 %),
  // whole requests from 192 (B=32 L=32k -1.7 %), two waves (B=64 L=32k -1.0 %).
  CHECK_FALSE(cuts(kE4m3, 256, 16, 8, 16, 16384));
  CHECK_FALSE(cuts(kE4m3, 256, 16, 8, 8, 32768));
  CHECK(cuts(kE4m3, 256, 16, 8, 16, 32768));
  CHECK(cuts(kE4m3, 256, 16, 8, 32, 32768));
  CHECK(cuts(kE4m3, 256, 16, 8, 64, 32768));
  // Pages of one key: one-wave plans from 192 tiles a slot (B=8 L=32k, 124 tiles, +1.2 / +1.6 %;
  // B=16 L=32k, 248, cut), two-wave ones as for page 16 (B=64 L=32k -1.2 / -1.0 %).
  CHECK_FALSE(cuts(kBf16, 128, 32, 8, 8, 32768, false, 1));
  CHECK(cuts(kBf16, 128, 32, 8, 16, 32768, false, 1));
  CHECK(cuts(kBf16, 128, 32, 8, 64, 32768, false, 1));
  CHECK(cuts(kBf16, 128, 32, 8, 8, 32768, false, 64));
  // Graph mode keeps its grid.
  CHECK_FALSE(cuts(kBf16, 128, 32, 8, 16, 32768, true));
}

// Session 18: fp8 launches at D 128 whose CTAs leave a slot free on most SMs and read 4 tiles or
// more take no PDL (ops::DecodePdlCrowds); graph mode, the merge kernel's plans and 16-bit caches
// keep it.
TEST_CASE("decode plans: no PDL where waiting successors would crowd the launch", "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_PLAN_MODEL")) {
    WARN("a decode plan knob is set: the default rule is not checked");
    return;
  }
  auto engine = test::MakeTestEngine("");
  BatchDecodeConfig c;
  c.num_qo_heads = 32;
  c.num_kv_heads = 8;
  c.kv_dtype = DType::kF8E4M3;
  c.max_batch_size = 256;
  const ops::DecodeScheduleLimits l = ops::BatchDecodeLimits(*engine, c, 132);
  REQUIRE(l.slots == 396);
  CHECK(ops::DecodePdlCrowds(c, l, 128, 8, false));         // B=16 L=512: 128 lone CTAs
  CHECK(ops::DecodePdlCrowds(c, l, 264, 64, false));        // 2 an SM: one slot free each
  CHECK_FALSE(ops::DecodePdlCrowds(c, l, 265, 64, false));  // some SMs full
  CHECK_FALSE(ops::DecodePdlCrowds(c, l, 384, 6, false));   // every slot taken
  CHECK_FALSE(ops::DecodePdlCrowds(c, l, 66, 8, false));    // whole SMs left free
  CHECK(ops::DecodePdlCrowds(c, l, 67, 8, false));
  CHECK_FALSE(ops::DecodePdlCrowds(c, l, 256, 3, false));  // short CTAs: PDL gains
  CHECK_FALSE(ops::DecodePdlCrowds(c, l, 128, 8, true));   // the merge kernel follows
  BatchDecodeConfig g = c;
  g.cuda_graph = true;
  CHECK_FALSE(ops::DecodePdlCrowds(g, l, 128, 8, false));
  BatchDecodeConfig b = c;
  b.kv_dtype = DType::kBF16;
  CHECK_FALSE(ops::DecodePdlCrowds(b, ops::BatchDecodeLimits(*engine, b, 132), 128, 8, false));
}

TEST_CASE("decode plans in graph mode: clusters of the wrapper's one size", "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_PLAN_MODEL") || std::getenv("FLASHJIT_DECODE_PERSISTENT") ||
      std::getenv("FLASHJIT_DECODE_MERGE") || std::getenv("FLASHJIT_DECODE_CHUNK") ||
      std::getenv("FLASHJIT_DECODE_CLUSTER") || std::getenv("FLASHJIT_DECODE_MAX_CLUSTER") ||
      std::getenv("FLASHJIT_DECODE_GRAPH_CLUSTER")) {
    WARN("a decode plan knob is set: the default plans are not checked");
    return;
  }
  auto engine = test::MakeTestEngine("");
  auto config = [](int hq, int hkv, int max_b, bool graph = true) {
    BatchDecodeConfig c;
    c.num_qo_heads = hq;
    c.num_kv_heads = hkv;
    c.max_batch_size = max_b;
    c.cuda_graph = graph;
    return c;
  };
  auto size = [&](const BatchDecodeConfig& c) {
    return ops::DecodeGraphCluster(*engine, c, ops::BatchDecodeLimits(*engine, c, 132));
  };
  // Clusters of 2 up to 16 requests of 8 kv heads (16 x 8 x 2 = 256 <= 264 slots), past the
  // merge kernel's small batches (x 8 chunks > 264).
  CHECK(size(config(32, 8, 16)) == 2);
  CHECK(size(config(32, 8, 17)) == 0);
  CHECK(size(config(32, 8, 5)) == 2);
  CHECK(size(config(32, 8, 4)) == 0);  // 4 x 8 x 8 = 256: the merge kernel's batches
  CHECK(size(config(32, 8, 1)) == 0);
  CHECK(size(config(8, 1, 132)) == 2);
  CHECK(size(config(8, 1, 34)) == 2);
  CHECK(size(config(8, 1, 33)) == 0);
  CHECK(size(config(32, 8, 1, false)) == 0);  // stream mode: each plan's own cluster
  {
    BatchDecodeConfig fp8 = config(32, 8, 1), d64 = config(32, 8, 1);
    fp8.kv_dtype = DType::kF8E4M3;
    d64.head_dim = 64;
    CHECK(size(fp8) == 0);  // where DecodeMaxCluster has none
    CHECK(size(d64) == 0);
  }
  // Larger sizes by the knob, where the requests fit 10/11 of the slots (small batches too).
  ops::SetDecodeGraphClusterForTesting(8);
  CHECK(size(config(32, 8, 1)) == 8);
  CHECK(size(config(32, 8, 3)) == 8);
  CHECK(size(config(32, 8, 4)) == 4);   // 4 x 8 x 8 = 256 > 240
  CHECK(size(config(32, 8, 16)) == 2);  // 16 x 8 x 4 = 512 > 240
  CHECK(ops::BatchDecodeLimits(*engine, config(8, 1, 4), 132).slots == 240);
  ops::SetDecodeGraphClusterForTesting(0);
  CHECK(size(config(32, 8, 16)) == 0);
  ops::SetDecodeGraphClusterForTesting(-1);

  // The plans of the GPU case's wrapper (32 / 8 heads, batches of up to 16).
  auto plan = [&](const BatchDecodeConfig& c, std::vector<int> lens) {
    ops::DecodeScheduleLimits l = ops::BatchDecodeLimits(*engine, c, 132);
    l.max_items = ops::DecodeMaxItems(c.max_batch_size, l);
    std::vector<ops::DecodeRequest> requests;
    for (int len : lens) requests.push_back({0, len, 0});
    return ops::BuildDecodeSchedule(requests, l);
  };
  const BatchDecodeConfig base = config(32, 8, 16);
  for (int len : {1024, 3000}) {
    INFO("15 requests of " << len);
    const ops::DecodeSchedule s = plan(base, std::vector<int>(15, len));
    CHECK(s.cluster == 2);
    REQUIRE(s.work.size() == 30);
    for (const attention::DecodeWorkItem& w : s.work)
      CHECK(w.partial == attention::kDecodePartialCluster);
  }
  {
    std::vector<int> lens(16, 1024);
    lens[15] = 500;  // one chunk where the others have two: no cluster
    const ops::DecodeSchedule s = plan(base, lens);
    CHECK(s.cluster == 0);
    for (const attention::DecodeWorkItem& w : s.work)
      CHECK(w.partial != attention::kDecodePartialCluster);
  }
  CHECK(plan(base, std::vector<int>(16, 100)).cluster == 0);  // unsplit
  CHECK(plan(base, {2048}).cluster == 0);                     // 2 chunks would leave the GPU idle
  // Stream mode takes clusters of 8 for one request of 1024 keys; a graph wrapper of size 2 may
  // not, and a wrapper of size 8 takes exactly 8.
  CHECK(plan(config(32, 8, 16, false), {1024}).cluster == 8);
  CHECK(plan(base, {1024}).cluster != 8);
  ops::SetDecodeGraphClusterForTesting(8);
  const BatchDecodeConfig tp8 = config(8, 1, 4);
  const ops::DecodeSchedule one = plan(tp8, {1024});
  const ops::DecodeSchedule four = plan(tp8, {1024, 1024, 1024, 1024});
  const ops::DecodeSchedule long1 = plan(tp8, {16000});
  // Stream mode clusters 200 and 700 keys in 4 and 6 chunks; this wrapper only in 8.
  const int32_t c200 = plan(tp8, {200}).cluster, c700 = plan(tp8, {700, 700, 700}).cluster;
  ops::SetDecodeGraphClusterForTesting(-1);
  CHECK(plan(config(8, 1, 4, false), {200}).cluster == 4);
  CHECK(plan(config(8, 1, 4, false), {700, 700, 700}).cluster == 6);
  CHECK((c200 == 0 || c200 == 8));
  CHECK((c700 == 0 || c700 == 8));
  CHECK(one.cluster == 8);
  CHECK(four.cluster == 8);
  // A graph-mode wrapper launches its capacity of items on every replay: one wave of split
  // items beyond the batch where the batch fits one wave unsplit, else four, as outside graph
  // mode (bf16 32 / 8 heads: 33 items a wave; fp8: 396 slots, 49 items a wave).
  auto capacity = [&](const BatchDecodeConfig& c) {
    return ops::BatchDecodeMaxItems(c, ops::BatchDecodeLimits(*engine, c, 132));
  };
  CHECK(capacity(config(32, 8, 16)) == 16 + 33 + 4);
  CHECK(capacity(config(32, 8, 16, false)) == 16 + 4 * 33 + 4);
  CHECK(capacity(config(32, 8, 64)) == 64 + 4 * 33 + 4);  // 512 CTAs > 264
  BatchDecodeConfig fp8 = config(32, 8, 64);
  fp8.kv_dtype = DType::kF8E4M3;
  CHECK(capacity(fp8) == 64 + 4 * 49 + 4);
  fp8.max_batch_size = 49;
  CHECK(capacity(fp8) == 49 + 49 + 4);
  CHECK(long1.cluster == 0);
  CHECK(long1.merge.size() == 1);
}

}  // namespace
}  // namespace flashjit

namespace flashjit {
namespace {

// Session 30: plans compile the page size in (variant field page_size) where it is a power of
// two up to a tile; their items must then start on a page. The schedule's items start on tile
// multiples of each request's first key (chunks, cluster chunks, tail pieces, stealing pairs), so
// a first key on a page (Plan rounds a window's down) keeps every item on one.
TEST_CASE("decode plans: the page size compiled in, and items on its pages", "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_FIXED_PAGE")) {
    WARN("FLASHJIT_DECODE_FIXED_PAGE is set: the default rule is not checked");
    return;
  }
  for (int p : {16, 32, 64}) CHECK(ops::DecodeFixedPage(p) == p);
  for (int p : {0, 1, 2, 4, 8, 3, 5, 12, 24, 48, 80, 128, 256, 1 << 20})
    CHECK(ops::DecodeFixedPage(p) == 0);
  ops::SetDecodeFixedPageForTesting(1);  // every page size the variant allows
  for (int p : {1, 2, 4, 8, 16, 32, 64}) CHECK(ops::DecodeFixedPage(p) == p);
  for (int p : {3, 24, 128}) CHECK(ops::DecodeFixedPage(p) == 0);
  ops::SetDecodeFixedPageForTesting(0);
  CHECK(ops::DecodeFixedPage(16) == 0);
  ops::SetDecodeFixedPageForTesting(-1);
  CHECK(ops::DecodeFixedPage(16) == 16);
  ops::DecodeSpec spec = ops::ChooseDecode(DType::kBF16, DType::kBF16, 128, false, false, false);
  CHECK(spec.page_size == 0);  // single decode: contiguous, read at run time
  spec.page_size = 16;
  auto variant = spec.ToVariant();
  REQUIRE(variant.ok());
  CHECK(variant->name().find("_p16") != std::string::npos);
  spec.page_size = 24;
  CHECK(!spec.ToVariant().ok());  // not a power of two up to a tile

  auto engine = test::MakeTestEngine("");
  for (const bool steal : {false, true})
    for (const int tail : {0, 1}) {
      BatchDecodeConfig c;
      c.num_qo_heads = 32;
      c.num_kv_heads = 8;
      c.max_batch_size = 64;
      ops::DecodeScheduleLimits l = ops::BatchDecodeLimits(*engine, c, 132);
      l.max_items = ops::DecodeMaxItems(c.max_batch_size, l);
      if (tail) {
        l.tail_fraction = 0.03;
        l.tail_piece = 0;
        l.tail_min_tiles = 8;
        l.tail_min_whole_tiles = 8;
      }
      std::vector<ops::DecodeRequest> requests;
      std::mt19937 rng(7 + tail);
      std::uniform_int_distribution<int> len(1, 40000);
      for (int b = 0; b < 24; ++b) {
        const int n = len(rng);
        requests.push_back({b * 100, n, ops::DecodeFirstKey(n, b % 3 ? 1000 : -1, 16)});
      }
      ops::DecodeSchedule s = ops::BuildDecodeSchedule(requests, l);
      if (steal) ops::MarkDecodeStealPairs(s, 5, 0);
      INFO("steal " << steal << ", tail " << tail << ": " << s.work.size() << " items");
      REQUIRE(!s.work.empty());
      for (const attention::DecodeWorkItem& w : s.work)
        if (w.kv_end > w.kv_start) CHECK(w.kv_start % 16 == 0);
    }
}

}  // namespace
}  // namespace flashjit
