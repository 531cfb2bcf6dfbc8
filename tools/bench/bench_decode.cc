// Batch decode bandwidth over a paged KV cache: bytes that must move = K + V read.
// bf16 (and fp8 KV), 32 query / 8 kv heads, head_dim 128, page 16, random page order.
// Inputs rotate over several page tables when one shape's KV is smaller than the L2 many times.
// Other configurations (session 13): --configs NAME,... runs named ones (kConfigs below: heads,
// head_dim, page size, dtype, soft cap, window, RoPE) over B x L in {1, 16, 64, 256} x {1k, 4k,
// 16k} (shapes of more than kMaxConfigKVBytes of KV are left out);
// --hq/--hkv/--head-dim/--page-size/
// --dtype/--soft-cap/--window set the configuration of the default grid instead (rows then carry
// the configuration's name "custom"). Bytes = K + V read (a window reads its last window + 1 keys).
// --plan: prints each shape's plan as BatchDecode::Create/Plan would make it on 132 SMs (host
// only, also in dry run).
#include <flashjit/decode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attention/decode_params.cuh"
#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/driver.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;

namespace {

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

void Upload(void* dst, const void* src, size_t bytes) {
  if (bench::DryRun()) return;
  auto d = runtime::Driver();
  Check(d.status());
  const CUresult rc = (*d)->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes);
  if (rc != CUDA_SUCCESS) Check(runtime::CudaStatus(rc, "cuMemcpyHtoD"));
}

// A decode configuration: heads, head_dim, page size, dtypes, logits soft cap, window.
struct Config {
  std::string name;  // "" = the benchmark's own (32/8, D 128, page 16, bf16): rows as before
  int hq = 32, hkv = 8, d = 128, ps = 16;
  DType q = DType::kBF16;
  float cap = 0.f;
  int window = -1;    // window_left: a request reads its last window + 1 keys
  bool rope = false;  // RoPE inside the kernel (DecodeOptions::rope)
};

// Production configurations (session 13). Heads per GPU under tensor parallelism.
const std::vector<Config>& NamedConfigs() {
  static const std::vector<Config> kConfigs = {
      {"base", 32, 8, 128, 16},                               // the benchmark's shape
      {"tp8", 8, 1, 128, 16},                                 // Llama-70B over 8 GPUs
      {"tp4", 16, 2, 128, 16},                                // Llama-70B over 4 GPUs
      {"qwen7b", 28, 4, 128, 16},                             // group 7
      {"gemma2", 16, 8, 256, 16, DType::kBF16, 50.f},         // Gemma-2-9B's global layers
      {"gemma2w", 16, 8, 256, 16, DType::kBF16, 50.f, 4095},  // its local layers (4096 keys)
      {"mha", 32, 32, 128, 16},                               // group 1 (Llama-2-7B)
      {"d64", 32, 8, 64, 16},                                 // head_dim 64
      {"page1", 32, 8, 128, 1},                               // SGLang's default page size
      {"page64", 32, 8, 128, 64},
      {"f16", 32, 8, 128, 16, DType::kF16},
      // RoPE inside the kernel (session 24: fp8 caches' plans count the CTAs its shared memory
      // allows), at D 128 and at D 256 (16/8 heads, no soft cap).
      {"rope", 32, 8, 128, 16, DType::kBF16, 0.f, -1, true},
      {"rope256", 16, 8, 256, 16, DType::kBF16, 0.f, -1, true},
  };
  return kConfigs;
}

// Shapes of a configuration run are left out above this much KV (mha at B=256 L=16k: 64 GB).
constexpr int64_t kMaxConfigKVBytes = int64_t(16) << 30;

struct Shape {
  int b, len;
  DType kv;
  int cfg = -1;  // index into Options::configs; -1 = the benchmark's own
};

// The shape's name for --shapes.
std::string ShapeKey(const Shape& s) {
  return fmt::format("{}{}x{}", s.kv == DType::kBF16 || s.kv == DType::kF16 ? "" : "e4m3:", s.b,
                     s.len);
}

// --shapes LIST: only these shapes, comma-separated: BxL (bf16), e4m3:BxL, sL (single decode).
// --once (bench_util): one call of each shape, no timing (for a profiler).
// --persistent 0|1|auto: sets FLASHJIT_DECODE_PERSISTENT for this process (A/B of the persistent
// grid: 0 = one CTA per (item, head tile), 1 = every plan that does not cluster, auto = default).
// --fast-index 0|1|auto: sets FLASHJIT_DECODE_FAST_INDEX (session 11's A/B: the CTA's item and
// head tile from the launch's divisors; auto = the default: plans with more CTAs than slots).
// --steal 0|1|auto: sets FLASHJIT_DECODE_STEAL (session 12: pair stealing in plans whose split
// requests are merged by their last CTA; 1 = every such plan, auto = the rule of kStealAuto;
// unset / 0 = never, the library's default).
// --max-batch N: the wrapper's max_batch_size is max(B, N) instead of B (session 12: a larger
// workspace, so that FLASHJIT_DECODE_CHUNK may force plans of more work items than
// DecodeMaxItems(B) allows, e.g. chunks of 2048 keys at B=16 L=32k).
// --lengths L,...: the batch shapes' lengths instead of the grid's (e.g. short contexts).
// --batches B,...: the grids' batch sizes instead of 1, 16, 64, 256.
// --kv e4m3: the --configs shapes over an fp8 (e4m3) cache instead of the query's type.
// --graph: the wrapper in CUDA graph mode (max_batch_size = max(B, --max-batch)); each input
// copy's Run() is captured once into a graph, and the timed call is its cuGraphLaunch (session
// 15: the merge kernel in graph mode).
// --layout hnd: the paged cache as [pages, 2, Hkv, page, D] (one head's page contiguous) instead
// of NHD [pages, 2, page, Hkv, D]; the same bytes and page tables.
// --stamps FILE: diagnostic (FLASHJIT_DECODE_STAMPS=1, the stamps variant): before timing each
// batch shape, one call alone and the second of two back-to-back calls write per-CTA timestamps;
// a summary line per call is printed and the raw stamps are appended to FILE. Since session 11
// each stamped call follows one call on every other input copy (as in the timing loop: the
// stamped call's page table, q and out were last touched `copies` calls before, and the previous
// call streamed its K/V); before, the alone call came right after Plan's copy.
struct Options {
  std::vector<std::string> shapes;
  bool hnd = false;
  bool graph = false;        // --graph
  std::vector<int> lengths;  // --lengths (empty: each grid's own)
  std::vector<int> batches;  // --batches (empty: 1, 16, 64, 256)
  int max_batch = 0;
  bool kv_e4m3 = false;  // --kv e4m3: every shape of the grid over e4m3 caches
  std::string stamps;
  std::vector<Config> configs;  // --configs (empty: the default grid on `custom`)
  Config custom;                // --hq etc.; name "custom" once any of them is given
  bool plan = false;
  // A shape key, or CONFIG:KEY for a configuration's shape.
  bool Wants(const std::string& key, const std::string& cfg = "") const {
    return shapes.empty() || std::find(shapes.begin(), shapes.end(), key) != shapes.end() ||
           (!cfg.empty() &&
            std::find(shapes.begin(), shapes.end(), cfg + ":" + key) != shapes.end());
  }
};

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t end = std::min(list.find(',', pos), list.size());
    if (end > pos) out.push_back(list.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// A knob option sets its environment variable to the value as given: each knob reads "auto" (like
// any value it does not name) as its automatic rule, which is also its default when unset, except
// FLASHJIT_DECODE_STEAL, whose default is never.
void SetKnob(const char* env, const std::string& value) { setenv(env, value.c_str(), 1); }

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--persistent") && i + 1 < argc)
      SetKnob("FLASHJIT_DECODE_PERSISTENT", argv[++i]);
    if (!std::strcmp(argv[i], "--max-batch") && i + 1 < argc) o.max_batch = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--layout") && i + 1 < argc) o.hnd = !std::strcmp(argv[++i], "hnd");
    if (!std::strcmp(argv[i], "--steal") && i + 1 < argc)
      SetKnob("FLASHJIT_DECODE_STEAL", argv[++i]);
    if (!std::strcmp(argv[i], "--fast-index") && i + 1 < argc)
      SetKnob("FLASHJIT_DECODE_FAST_INDEX", argv[++i]);
    if (!std::strcmp(argv[i], "--stamps") && i + 1 < argc) {
      o.stamps = argv[++i];
      setenv("FLASHJIT_DECODE_STAMPS", "1", 1);
    }
    if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc) o.shapes = SplitList(argv[++i]);
    if (!std::strcmp(argv[i], "--plan")) o.plan = true;
    if (!std::strcmp(argv[i], "--kv") && i + 1 < argc) {
      if (std::strcmp(argv[++i], "e4m3"))
        throw std::runtime_error(fmt::format(
            "--kv: '{}'; known: e4m3 (without --kv: the configuration's 16-bit type)", argv[i]));
      o.kv_e4m3 = true;
    }
    if (!std::strcmp(argv[i], "--graph")) o.graph = true;
    if (!std::strcmp(argv[i], "--lengths") && i + 1 < argc)
      for (const std::string& l : SplitList(argv[++i])) o.lengths.push_back(std::atoi(l.c_str()));
    if (!std::strcmp(argv[i], "--batches") && i + 1 < argc)
      for (const std::string& b : SplitList(argv[++i])) o.batches.push_back(std::atoi(b.c_str()));
    if (!std::strcmp(argv[i], "--configs") && i + 1 < argc) {
      for (const std::string& n : SplitList(argv[++i])) {
        bool found = false;
        for (const Config& c : NamedConfigs())
          if (c.name == n) o.configs.push_back(c), found = true;
        if (!found) {
          std::string all;
          for (const Config& c : NamedConfigs()) all += " " + c.name;
          throw std::runtime_error(fmt::format("--configs: unknown '{}'; known:{}", n, all));
        }
      }
    }
    auto int_opt = [&](const char* name, int* dst) {
      if (!std::strcmp(argv[i], name) && i + 1 < argc) {
        *dst = std::atoi(argv[++i]);
        o.custom.name = "custom";
      }
    };
    int_opt("--hq", &o.custom.hq);
    int_opt("--hkv", &o.custom.hkv);
    int_opt("--head-dim", &o.custom.d);
    int_opt("--page-size", &o.custom.ps);
    int_opt("--window", &o.custom.window);
    if (!std::strcmp(argv[i], "--soft-cap") && i + 1 < argc) {
      o.custom.cap = float(std::atof(argv[++i]));
      o.custom.name = "custom";
    }
    if (!std::strcmp(argv[i], "--dtype") && i + 1 < argc) {
      o.custom.q = !std::strcmp(argv[++i], "f16") ? DType::kF16 : DType::kBF16;
      o.custom.name = "custom";
    }
  }
  return o;
}

// Synced, queued and back-to-back figures of 30 calls (zeros with --once).
bench::Timings Time(const std::function<void(int)>& run) { return bench::TimeCall(run, 30, 5); }

// --stamps: per-CTA timestamps of one call alone and of the second of two back-to-back calls.
// Summary (µs; t0 = the first CTA's entry): span = t0 .. the last CTA's end; ramp = spread of the
// entries of the first wave (the CTAs that entered before any CTA ended); issued / landed = entry
// to the prologue's copies issued / to the first tile landed (median and max over the first wave,
// from %globaltimer since session 28), item / wait = entry to the plan's record read / past
// griddepcontrol.wait (from the SM clock);
// sm-tail = spread of the SMs' last ends; busy = sum over the SMs of (last end - first entry) /
// (SMs x span); ideal = bytes / 4.6 TB/s.
void StampShape(const std::function<void(int)>& run, const std::string& path, const Shape& s,
                const std::string& label, double bytes, bool hnd, int copies) {
  constexpr int64_t kCtas = 1 << 16;
  constexpr int kW = attention::kDecodeStampWords;
  static void* buf = bench::DeviceAlloc(size_t(kCtas) * kW * 8);
  ops::SetDecodeStampsBuffer(buf, kCtas);  // kept for the timing that follows
  if (bench::DryRun()) return;
  auto d = runtime::Driver();
  Check(d.status());
  auto sync = [&] {
    const CUresult rc = (*d)->cuCtxSynchronize();
    if (rc != CUDA_SUCCESS) Check(runtime::CudaStatus(rc, "cuCtxSynchronize"));
  };
  std::vector<unsigned long long> h(size_t(kCtas) * kW);
  FILE* f = std::fopen(path.c_str(), "a");
  for (int mode = 0; mode < 2; ++mode) {
    // One call on each other input copy (on the only one when there is one), then the stamped
    // call on copy 0.
    for (int i = 1; i < copies + (copies == 1); ++i) run(i);
    sync();
    if ((*d)->cuMemsetD8(reinterpret_cast<CUdeviceptr>(buf), 0, h.size() * 8) != CUDA_SUCCESS)
      throw std::runtime_error("cuMemsetD8");
    sync();
    run(copies);
    if (mode == 1) run(copies + 1);  // the second overwrites the first's stamps
    sync();
    if ((*d)->cuMemcpyDtoH(h.data(), reinterpret_cast<CUdeviceptr>(buf), h.size() * 8) !=
        CUDA_SUCCESS)
      throw std::runtime_error("cuMemcpyDtoH");
    struct Cta {
      double t[4];
      double item_cyc, wait_cyc, issue_cyc, land_cyc, end_cyc;
      int sm, tiles;
    };
    std::vector<Cta> ctas;
    unsigned long long t0 = ~0ull;
    for (int64_t i = 0; i < kCtas; ++i)
      if (h[i * kW] != 0) t0 = std::min(t0, h[i * kW]);
    for (int64_t i = 0; i < kCtas; ++i) {
      const unsigned long long* r = &h[i * kW];
      if (r[0] == 0) continue;
      Cta c;
      for (int k = 0; k < 4; ++k) c.t[k] = double(r[k] - t0) / 1e3;
      c.issue_cyc = double(r[4] & 0xffffffffull);
      c.land_cyc = double(r[4] >> 32);
      c.end_cyc = double(r[5]);
      c.sm = int(r[6] & 0xffffffffull);
      c.tiles = int(r[6] >> 32);
      c.item_cyc = double(r[7] & 0xffffffffull);
      c.wait_cyc = double(r[7] >> 32);
      ctas.push_back(c);
      if (f)
        std::fprintf(f,
                     "%s B=%d L=%d %s %s cta %lld sm %d tiles %d t %.3f %.3f %.3f %.3f "
                     "cyc item %.0f wait %.0f issued %.0f landed %.0f end %.0f\n",
                     label.c_str(), s.b, s.len, hnd ? "hnd" : "nhd", mode ? "b2b" : "alone",
                     static_cast<long long>(i), c.sm, c.tiles, c.t[0], c.t[1], c.t[2], c.t[3],
                     c.item_cyc, c.wait_cyc, c.issue_cyc, c.land_cyc, c.end_cyc);
    }
    if (ctas.empty()) continue;
    double span = 0, first_end = 1e30, ghz_num = 0, ghz_den = 0;
    for (const Cta& c : ctas) {
      span = std::max(span, c.t[3]);
      first_end = std::min(first_end, c.t[3]);
      if (c.t[3] - c.t[0] > 5) ghz_num += c.end_cyc, ghz_den += (c.t[3] - c.t[0]) * 1e3;
    }
    const double ghz = ghz_den > 0 ? ghz_num / ghz_den : 1.98;
    std::vector<double> starts, items, waits, issued, landed;
    std::vector<double> sm_first(1024, 1e30), sm_last(1024, -1);
    std::vector<int> sm_ctas(1024, 0);
    for (const Cta& c : ctas) {
      if (c.t[0] < first_end) {
        starts.push_back(c.t[0]);
        items.push_back(c.item_cyc / ghz / 1e3);
        waits.push_back(c.wait_cyc / ghz / 1e3);
        // From %globaltimer: the SM clock's reads may be scheduled past later loads' uses
        // (session 28 saw "issued" 6-7.7 us by the clock against 2.1-2.5 by the timer).
        issued.push_back(c.t[1] - c.t[0]);
        landed.push_back(c.t[2] - c.t[0]);
      }
      const int sm = std::clamp(c.sm, 0, 1023);
      sm_first[sm] = std::min(sm_first[sm], c.t[0]);
      sm_last[sm] = std::max(sm_last[sm], c.t[3]);
      ++sm_ctas[sm];
    }
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v.empty() ? 0.0 : v[v.size() / 2];
    };
    auto mx = [](const std::vector<double>& v) {
      return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
    };
    int sms = 0, max_per_sm = 0;
    double busy = 0, last_min = 1e30, last_max = 0;
    for (int sm = 0; sm < 1024; ++sm) {
      if (sm_last[sm] < 0) continue;
      ++sms;
      max_per_sm = std::max(max_per_sm, sm_ctas[sm]);
      busy += sm_last[sm] - sm_first[sm];
      last_min = std::min(last_min, sm_last[sm]);
      last_max = std::max(last_max, sm_last[sm]);
    }
    // Distinct entry stamps (a coarse %globaltimer shows few).
    std::vector<double> st = starts;
    std::sort(st.begin(), st.end());
    const int distinct = int(std::unique(st.begin(), st.end()) - st.begin());
    fmt::print(
        "stamps {} B={} L={} {} {}: ctas {} sms {} max/sm {} span {:.2f} ramp {:.2f} (wave {}, "
        "{} distinct) item {:.2f}/{:.2f} wait {:.2f} issued {:.2f}/{:.2f} landed {:.2f}/{:.2f} "
        "first-end {:.2f} sm-tail {:.2f} "
        "busy {:.1f}% (of 132) ideal {:.2f} clk {:.2f} GHz\n",
        label, s.b, s.len, hnd ? "hnd" : "nhd", mode ? "b2b" : "alone", ctas.size(), sms,
        max_per_sm, span, mx(starts), starts.size(), distinct, med(items), mx(items), med(waits),
        med(issued), mx(issued), med(landed), mx(landed), first_end, last_max - last_min,
        100.0 * busy / (132.0 * span), bytes / 4.6e6, ghz);
  }
  if (f) std::fclose(f);
}

// --graph: captures run_on(cp, stream) for each input copy cp into an instantiated graph (the
// wrapper is in graph mode and planned).
std::vector<CUgraphExec> CaptureGraphs(int copies,
                                       const std::function<void(int, CUstream)>& run_on) {
  auto d = runtime::Driver();
  Check(d.status());
  auto check = [](CUresult rc, const char* what) {
    if (rc != CUDA_SUCCESS) Check(runtime::CudaStatus(rc, what));
  };
  CUstream stream = nullptr;
  check((*d)->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  std::vector<CUgraphExec> out;
  for (int cp = 0; cp < copies; ++cp) {
    run_on(cp, stream);  // outside the capture first (nothing to load while capturing)
    check((*d)->cuStreamSynchronize(stream), "cuStreamSynchronize");
    check((*d)->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
    run_on(cp, stream);
    CUgraph graph = nullptr;
    check((*d)->cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    check((*d)->cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
    (*d)->cuGraphDestroy(graph);
    out.push_back(exec);
  }
  check((*d)->cuStreamDestroy(stream), "cuStreamDestroy");
  return out;
}

// --plan: the schedule BatchDecode::Create/Plan make for this configuration and batch on an
// H200 (132 SMs: ops::BatchDecodeLimits and ops::ChooseDecodePlanForm, host only; the knobs apply).
void PrintPlan(const Engine& engine, const Config& c, const Shape& s, bool graph, int max_batch) {
  BatchDecodeConfig bc;
  bc.num_qo_heads = c.hq;
  bc.num_kv_heads = c.hkv;
  bc.head_dim = c.d;
  bc.page_size = c.ps;
  bc.q_dtype = c.q;
  bc.kv_dtype = s.kv;
  bc.max_batch_size = std::max(s.b, max_batch);
  bc.cuda_graph = graph;
  // Plan's limits: Create's capacity, and RoPE's slots outside graph mode.
  const ops::DecodeScheduleLimits base = ops::BatchDecodeLimits(engine, bc, 132);
  ops::DecodeScheduleLimits lim = ops::BatchDecodeLimits(engine, bc, 132, c.rope && !graph);
  lim.max_items = ops::BatchDecodeMaxItems(bc, base);
  const int kv_bytes = DTypeBytes(s.kv);
  const int group = c.hq / c.hkv;
  const int q_tiles = (group + attention::kDecodeQTile - 1) / attention::kDecodeQTile;
  std::vector<ops::DecodeRequest> req(s.b);
  const int pages_per = (s.len + c.ps - 1) / c.ps;
  for (int r = 0; r < s.b; ++r)
    req[r] = {r * pages_per, s.len, c.window >= 0 ? std::max(0, s.len - 1 - c.window) : 0};
  const ops::DecodeSchedule sch = ops::BuildDecodeSchedule(req, lim);
  const ops::DecodePlanForm form = ops::ChooseDecodePlanForm(bc, ops::DecodePersistent(), sch, lim);
  fmt::print(
      "plan {} B={} L={}: group {} q_tiles {} ctas/item {} slots {} stages {} chunk {} items {} "
      "ctas {} waves {:.2f} cluster {} merges {} merge_kernel {} persistent {} fast_index {} "
      "tiles/cta {} pdl {}\n",
      c.name.empty() ? "base" : c.name, s.b, s.len, group, q_tiles, lim.ctas_per_item, lim.slots,
      ops::DecodeStages(c.d, kv_bytes), sch.chunk, sch.work.size(), form.units,
      double(form.units) / lim.slots, sch.cluster, sch.merge.size(), form.merge_kernel ? 1 : 0,
      form.persistent ? 1 : 0, form.fast_index ? 1 : 0, form.longest_tiles,
      ops::DecodePlanPdl(engine, bc, lim, form) ? 1 : 0);
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  Options opt = ParseOptions(argc, argv);
  // The configurations to run: --configs, else the one the options describe (the benchmark's own
  // when none is given).
  std::vector<Config> configs = opt.configs;
  if (configs.empty()) configs.push_back(opt.custom);
  const std::vector<int> batches =
      opt.batches.empty() ? std::vector<int>{1, 16, 64, 256} : opt.batches;
  std::vector<Shape> shapes;
  for (int ci = 0; ci < int(configs.size()); ++ci) {
    const Config& c = configs[ci];
    if (c.name.empty() || c.name == "custom") {  // the default grid
      for (int b : batches)
        for (int len :
             opt.lengths.empty() ? std::vector<int>{1024, 4096, 16384, 32768} : opt.lengths)
          shapes.push_back({b, len, opt.kv_e4m3 ? DType::kF8E4M3 : c.q, ci});
      if (c.q == DType::kBF16 && !opt.kv_e4m3)
        for (auto [b, len] : {std::pair{16, 4096}, {64, 4096}, {64, 32768}, {256, 1024}})
          shapes.push_back({b, len, DType::kF8E4M3, ci});
      continue;
    }
    for (int b : batches)
      for (int len : opt.lengths.empty() ? std::vector<int>{1024, 4096, 16384} : opt.lengths) {
        const int64_t keys = c.window >= 0 ? std::min(len, c.window + 1) : len;
        if (int64_t(b) * len * c.hkv * c.d * 4 > kMaxConfigKVBytes && keys == len) continue;
        shapes.push_back({b, len, opt.kv_e4m3 ? DType::kF8E4M3 : c.q, ci});
      }
  }
  auto key_bytes = [&](const Shape& s) {  // K + V bytes of one key (all kv heads)
    return int64_t(configs[s.cfg].hkv) * configs[s.cfg].d * 2 * DTypeBytes(s.kv);
  };
  auto wants = [&](const Shape& s) { return opt.Wants(ShapeKey(s), configs[s.cfg].name); };

  // The pool holds the largest selected shape, and at least 2 GB (the rotation over copies and
  // the single-request rows need 1 GB).
  int64_t pool_bytes = ((1LL << 19) / 16 + 64) * 16 * 8 * 128 * 2 * 2;  // 2 GB
  for (const Shape& s : shapes) {
    if (!wants(s)) continue;
    const Config& c = configs[s.cfg];
    const int64_t tokens = std::max<int64_t>(1LL << 19, int64_t(s.b) * s.len);
    pool_bytes =
        std::max<int64_t>(pool_bytes, (tokens / c.ps + 64) * c.ps * int64_t(c.hkv) * c.d * 2 * 2);
  }
  if (bench::DryRun()) pool_bytes = int64_t(64) * 64 * 1024;  // 4 MB, as before
  // One pool of pages for every shape, K and V per page ([pages, 2, ps, Hkv, D]).
  void* pool = bench::DeviceAlloc(size_t(pool_bytes));
  bench::DeviceFillRandom16(pool, size_t(pool_bytes) / 2, 1.f);
  void* ws = nullptr;
  size_t ws_bytes = 0;
  std::mt19937 rng(7);

  for (const Shape& s : shapes) {
    if (!wants(s)) continue;
    const Config& c = configs[s.cfg];
    const int hq = c.hq, hkv = c.hkv, d = c.d, ps = c.ps;
    const int64_t page_bytes = int64_t(ps) * key_bytes(s);  // K and V of one page
    if (opt.plan) PrintPlan(engine, c, s, opt.graph, opt.max_batch);
    const int64_t pages_per = (s.len + ps - 1) / ps, pages = pages_per * s.b;
    const int64_t keys = c.window >= 0 ? std::min(s.len, c.window + 1) : s.len;
    const int64_t kv_bytes = int64_t(s.b) * keys * key_bytes(s);
    // Enough page tables to rotate over ~1 GB of KV (the L2 is 60 MB).
    const int copies =
        bench::DryRun() ? 1 : int(std::clamp<int64_t>((1LL << 30) / kv_bytes, 1, 16));
    const int64_t n_pages = pool_bytes / page_bytes;
    const int64_t usable = std::min<int64_t>(n_pages, bench::DryRun() ? pages : INT64_MAX);
    std::vector<int32_t> indptr(s.b + 1), last(s.b, s.len - (pages_per - 1) * ps);
    for (int r = 0; r <= s.b; ++r) indptr[r] = int32_t(r * pages_per);
    std::vector<void*> tables, qs, outs;
    std::vector<int32_t> perm(usable);
    for (int cp = 0; cp < copies; ++cp) {
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);  // random page order, distinct per copy
      tables.push_back(bench::DeviceAlloc(pages * 4));
      Upload(tables.back(), perm.data(), pages * 4);
      qs.push_back(bench::DeviceAlloc(size_t(s.b) * hq * d * 2));
      bench::DeviceFillRandom16(qs.back(), size_t(s.b) * hq * d, 1.f);
      outs.push_back(bench::DeviceAlloc(size_t(s.b) * hq * d * 2));
    }
    BatchDecodeConfig cfg;
    cfg.num_qo_heads = hq;
    cfg.num_kv_heads = hkv;
    cfg.head_dim = d;
    cfg.page_size = ps;
    cfg.q_dtype = c.q;
    cfg.kv_dtype = s.kv;
    cfg.max_batch_size = std::max(s.b, opt.max_batch);
    cfg.layout = opt.hnd ? KVLayout::kHND : KVLayout::kNHD;
    cfg.cuda_graph = opt.graph;
    auto w = BatchDecode::Create(engine, cfg);
    Check(w.status());
    if ((*w)->WorkspaceBytes() > ws_bytes) {
      ws_bytes = (*w)->WorkspaceBytes() * 2;
      ws = bench::DeviceAlloc(ws_bytes);
    }
    DecodeOptions dopt;
    dopt.logits_soft_cap = c.cap;
    dopt.window_left = c.window;
    dopt.rope = c.rope;
    Check((*w)->Plan(indptr.data(), last.data(), s.b, dopt, ws, ws_bytes));
    TensorView cache = opt.hnd ? TensorView::Contiguous(pool, s.kv, {n_pages, 2, hkv, ps, d})
                               : TensorView::Contiguous(pool, s.kv, {n_pages, 2, ps, hkv, d});
    TensorView k, v;
    Check(SplitKVCache(cache, &k, &v));
    const auto run_on = [&](int i, CUstream stream) {
      const int cp = i % copies;
      Check((*w)->Run(TensorView::Contiguous(qs[cp], c.q, {s.b, hq, d}), k, v,
                      TensorView::Contiguous(tables[cp], DType::kI32, {pages}),
                      TensorView::Contiguous(outs[cp], c.q, {s.b, hq, d}), {}, stream));
    };
    std::vector<CUgraphExec> graphs;  // --graph: one per input copy
    if (opt.graph && !bench::DryRun()) graphs = CaptureGraphs(copies, run_on);
    const auto run = [&](int i) {
      if (graphs.empty()) return run_on(i, nullptr);
      auto d = runtime::Driver();
      if ((*d)->cuGraphLaunch(graphs[i % copies], nullptr) != CUDA_SUCCESS)
        throw std::runtime_error("cuGraphLaunch");
    };
    const std::string dt = s.kv == DType::kBF16  ? "bf16"
                           : s.kv == DType::kF16 ? "f16"
                                                 : (c.q == DType::kBF16 ? "e4m3kv" : "f16-e4m3kv");
    const std::string label = c.name.empty() ? dt : c.name + " " + dt;
    if (!opt.stamps.empty())
      StampShape(run, opt.stamps, s, label, double(kv_bytes), opt.hnd, copies);
    const bench::Timings t = Time(run);
    bench::Report(opt.graph ? "decode_graph" : "decode",
                  fmt::format("{} B={} L={}", label, s.b, s.len), t.alone, double(kv_bytes), 0,
                  fmt::format("stages {}", ops::DecodeStages(d, DTypeBytes(s.kv))) +
                      bench::TimingsNote(t, double(kv_bytes)));
    for (CUgraphExec g : graphs) (*runtime::Driver())->cuGraphExecDestroy(g);
  }
  if (!opt.configs.empty() || !opt.custom.name.empty()) return 0;
  const int hq = 32, hkv = 8, d = 128;
  // Single-request decode (contiguous KV, split over the SMs).
  for (int len : {1024, 4096, 16384, 32768}) {
    if (!opt.Wants(fmt::format("s{}", len))) continue;
    const size_t wsb = SingleDecodeWorkspaceBytes(hq, d);
    void* sws = bench::DeviceAlloc(wsb);
    void* q = bench::DeviceAlloc(size_t(hq) * d * 2);
    void* out = bench::DeviceAlloc(size_t(hq) * d * 2);
    bench::DeviceFillRandom16(q, size_t(hq) * d, 1.f);
    const int64_t kv_elems = int64_t(len) * hkv * d;
    const int copies =
        bench::DryRun() ? 1 : int(std::clamp<int64_t>((1LL << 30) / (kv_elems * 4), 1, 16));
    const auto run = [&](int i) {
      char* base = static_cast<char*>(pool) + (i % copies) * kv_elems * 4;
      Check(SingleDecode(engine, TensorView::Contiguous(q, DType::kBF16, {hq, d}),
                         TensorView::Contiguous(base, DType::kBF16, {len, hkv, d}),
                         TensorView::Contiguous(base + kv_elems * 2, DType::kBF16, {len, hkv, d}),
                         TensorView::Contiguous(out, DType::kBF16, {hq, d}), {}, KVLayout::kNHD, {},
                         sws, wsb));
    };
    const bench::Timings t = Time(run);
    bench::Report("single_decode", fmt::format("bf16 L={}", len), t.alone, double(kv_elems) * 4, 0,
                  bench::TimingsNote(t, double(kv_elems) * 4));
  }
  return 0;
}
