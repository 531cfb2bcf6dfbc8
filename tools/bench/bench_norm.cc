// Normalization bandwidth. Bytes that must move: read x (+ residual), write out (+ residual),
// weights once. Inputs rotate over enough copies to exceed the 60 MB L2.
//   flashjit_bench_norm [--dry-run] [--sweep]   (--sweep also times alternative variants)
//   flashjit_bench_norm [--dry-run] --models     (only the model shapes:
//   tools/bench/model_shapes.h)
//
// Three timings per case: `us` = one call between two events (what a server sees for an
// isolated op, including the ~4.5 µs host enqueue of the launch when the GPU is idle), `queued`
// = one call between two events with the host enqueue hidden behind a spin kernel
// (bench::QueuedMicros), and, for the large shapes, `b2b` = 20 calls back to back between two
// events, per call (the kernel's own duration plus the gap between consecutive kernels).
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "src/ops/norm/norm_run.h"
#include "src/runtime/driver.h"
#include "tools/bench/bench_util.h"
#include "tools/bench/model_shapes.h"
#include "tools/bench/norm_sweep.h"

using namespace flashjit;

namespace {

const DType kDt = DType::kBF16;
using K = ops::NormKind;

int Copies(size_t bytes) {
  return bytes >= (64u << 20) ? 1 : std::min<int>(64, static_cast<int>((160u << 20) / bytes + 1));
}

// Random device buffers, shared by every case of the same size and role (sweeps reuse them).
const std::vector<void*>& Buffers(int role, int n, size_t bytes) {
  static std::map<std::tuple<int, int, size_t>, std::vector<void*>> cache;
  std::vector<void*>& v = cache[{role, n, bytes}];
  while (static_cast<int>(v.size()) < n) {
    v.push_back(bench::DeviceAlloc(bytes));
    bench::DeviceFillRandom16(v.back(), bytes / 2, 1.f);
  }
  return v;
}

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

std::string Describe(const ops::NormSpec& s) {
  return fmt::format("t{} r{} i{}{}{}{}{}{}", s.threads, s.rows, s.items, s.prefetch ? " pf" : "",
                     s.grid_stride ? " gs" : "", s.wprefetch ? " wp" : "",
                     s.streaming ? "" : " no-cs", s.minb ? fmt::format(" mb{}", s.minb) : "");
}

// One call's arguments: x -> out (out is also the residual of fused add), weight w and bias b
// (f32 for LayerNorm); shape [rows, heads, dim] (heads = 0: 2-D [rows, dim]).
ops::NormArgs Args(K kind, bool gemma, int64_t rows, int64_t heads, int64_t dim, void* x, void* out,
                   void* w, void* b) {
  auto view = [&](void* p) {
    return heads ? TensorView::Contiguous(p, kDt, {rows, heads, dim})
                 : TensorView::Contiguous(p, kDt, {rows, dim});
  };
  const DType wdt = kind == K::kLayer ? DType::kF32 : kDt;
  ops::NormArgs a;
  a.kind = kind;
  a.gemma = gemma;
  a.input = view(x);
  a.out = view(out);
  a.residual = a.out;
  a.weight = TensorView::Contiguous(w, wdt, {dim});
  a.bias = TensorView::Contiguous(b, wdt, {dim});
  return a;
}

std::string ShapeName(int64_t rows, int64_t heads, int64_t dim) {
  return heads ? fmt::format("bf16 {}x{}x{}", rows, heads, dim)
               : fmt::format("bf16 {}x{}", rows, dim);
}

// kind: rms, fused_add, layer; shape [rows, heads, dim] (heads = 0: 2-D [rows, dim]).
void Bench(Engine& engine, K kind, int64_t rows, int64_t heads, int64_t dim,
           const ops::NormSpec* force = nullptr, bool b2b = false) {
  const int64_t n = rows * (heads ? heads : 1) * dim;
  const size_t bytes = n * 2;
  const bool fused = kind == K::kFusedAdd, layer = kind == K::kLayer;
  const int copies = Copies(bytes * (fused ? 2 : 1));
  const std::vector<void*>& xs = Buffers(0, copies, bytes);
  const std::vector<void*>& outs = Buffers(1, copies, bytes);
  const DType wdt = layer ? DType::kF32 : kDt;
  void* w = Buffers(2, 1, dim * 4)[0];  // any finite bits will do for timing
  void* b = Buffers(3, 1, dim * 4)[0];
  auto run = [&](int i) {
    const int c = i % copies;
    Check(ops::RunNorm(engine, Args(kind, false, rows, heads, dim, xs[c], outs[c], w, b), nullptr,
                       force));
  };
  const double us = bench::MedianMicros(run);
  const double queued = bench::QueuedMicros(run);
  constexpr int kBatch = 20;
  const double us_b2b = b2b ? bench::MedianMicros(
                                  [&](int i) {
                                    for (int k = 0; k < kBatch; ++k) run(i * kBatch + k);
                                  },
                                  11, 2) /
                                  kBatch
                            : 0;
  const char* name = fused ? "fused_add_rmsnorm" : (layer ? "layernorm" : "rmsnorm");
  const std::string shape = ShapeName(rows, heads, dim);
  const double moved = (fused ? 4.0 : 2.0) * bytes + dim * (layer ? 8 : 2);
  const ops::NormSpec chosen =
      force ? *force
            : ops::ChooseNorm(kind, kDt, wdt, dim, 8, /*gemma=*/false, rows * (heads ? heads : 1));
  std::string note = fmt::format("{} {}", force ? "sweep" : "default", Describe(chosen));
  if (queued > 0) note += bench::QueuedNote(queued, moved);
  if (b2b && us_b2b > 0)
    note += fmt::format("  b2b {:.2f} us {:.3f} TB/s", us_b2b, moved / (us_b2b * 1e-6) / 1e12);
  bench::Report(name, shape, us, moved, 0, note);
}

// The ordinary copy of `bytes` timed the same two ways: the ceiling of loads and stores for a
// norm that reads and writes `bytes`.
void BenchCopy(size_t bytes, const std::string& what) {
  if (bench::DryRun()) return;
  bench::ReportDeviceCopy(Buffers(0, 1, bytes)[0], Buffers(1, 1, bytes)[0], bytes, what);
}

// --models: one shape of a model, the chooser's pick (or `force`), all three figures. `gemma`
// scales by weight + 1; heads > 0: QK-norm [rows, heads, dim]. Buffers from the shared pool,
// every copy made before the timing starts.
void BenchModel(Engine& engine, K kind, bool gemma, int64_t rows, int64_t heads, int64_t dim,
                const ops::NormSpec* force = nullptr, const std::string& tag = "model") {
  const int64_t n = rows * (heads ? heads : 1) * dim;
  const size_t bytes = n * 2;
  const bool fused = kind == K::kFusedAdd, layer = kind == K::kLayer;
  const int copies = bench::ModelCopies(bytes * (fused ? 2 : 1));
  const DType wdt = layer ? DType::kF32 : kDt;
  void* w = bench::ModelBuffer(2, 0, dim * 4);  // any finite bits will do for timing
  void* b = bench::ModelBuffer(3, 0, dim * 4);
  for (int c = 0; c < copies; ++c) bench::ModelBuffer(0, c, bytes), bench::ModelBuffer(1, c, bytes);
  auto run = [&](int i) {
    const int c = i % copies;
    Check(ops::RunNorm(engine,
                       Args(kind, gemma, rows, heads, dim, bench::ModelBuffer(0, c, bytes),
                            bench::ModelBuffer(1, c, bytes), w, b),
                       nullptr, force));
  };
  const bench::Timings t = bench::TimeCall(run);
  const char* name = fused   ? (gemma ? "gemma_fused_add_rmsnorm" : "fused_add_rmsnorm")
                     : layer ? "layernorm"
                     : heads ? "qk_rmsnorm"
                             : (gemma ? "gemma_rmsnorm" : "rmsnorm");
  const std::string shape = ShapeName(rows, heads, dim);
  const double moved = (fused ? 4.0 : 2.0) * bytes + dim * (layer ? 8 : 2);
  int vec = 8;
  while (dim % vec) vec /= 2;
  ops::NormSpec chosen =
      ops::ChooseNorm(kind, kDt, wdt, dim, vec, gemma, rows * (heads ? heads : 1));
  if (force) chosen = *force;
  bench::Report(
      name, shape, t.alone, moved, 0,
      fmt::format("{} v{} {}", tag, vec, Describe(chosen)) + bench::TimingsNote(t, moved));
}

int64_t g_max_tokens = int64_t{1} << 40;  // --max-tokens N: only the model rows up to N tokens

void RunModels(Engine& engine) {
  // The launch reference: the driver's copy of 256 bytes (a launch that moves nothing).
  BenchCopy(256, "launch reference (256 B)");
  for (int64_t tokens : bench::ModelTokens()) {
    if (tokens > g_max_tokens) continue;
    for (int64_t h : bench::ModelHiddens()) {
      BenchModel(engine, K::kRms, false, tokens, 0, h);
      BenchModel(engine, K::kFusedAdd, false, tokens, 0, h);
      BenchModel(engine, K::kRms, true, tokens, 0, h);
      BenchModel(engine, K::kLayer, false, tokens, 0, h);
    }
    for (auto [heads, d] : bench::ModelQkNorm())
      BenchModel(engine, K::kRms, false, tokens, heads, d);
  }
}

// --ab: session 13's A/B, interleaved (two rounds of: the previous form forced, then the
// chooser's pick or a candidate form), on the shapes where --models found a cliff.
void RunAb(Engine& engine, bool ab2) {
  using N = bench::NormKnob;
  struct Row {
    K kind;
    bool gemma;
    int64_t rows, heads, dim;
    std::vector<N> forms;  // forced forms; the chooser's pick is timed after them
  };
  // N{threads, items, rows, pf, gs, wp, cs, mb}
  const std::vector<Row> list = ab2 ? std::vector<Row>{
      // Call 3: LayerNorm capped at 256 threads (previous t512 i4), QK-norm 8x64 one access per
      // thread (previous t2 r64 i4 prefetching); the 128-wide QK-norm's forms for the next step.
      {K::kLayer, false, 16384, 0, 12288, {N{512, 4}}},
      {K::kLayer, false, 16384, 0, 16384, {N{512, 4}}},
      {K::kLayer, false, 16384, 0, 10240, {N{512, 4}}},
      {K::kLayer, false, 2048, 0, 12288, {N{512, 4}}},
      {K::kLayer, false, 16384, 0, 8192, {}},
      {K::kRms, false, 16384, 8, 64, {N{2, 4, 64, true}}},
      {K::kRms, false, 2048, 8, 64, {N{2, 4, 64, true}}},
      {K::kRms, false, 256, 8, 64, {N{2, 4, 64, true}}},
      {K::kRms, false, 16, 8, 64, {N{2, 4, 64, true}}},
      {K::kRms, false, 1, 8, 64, {N{2, 4, 64, true}}},
      {K::kRms, false, 16384, 32, 128, {N{8, 2, 32}, N{4, 4, 64}, N{16, 1, 16}}},
  } : std::vector<Row>{
      // hidden 4100 (8-byte accesses): previous pick t512 i4 (t1024 i2 at <= 128 rows).
      {K::kRms, false, 16384, 0, 4100, {N{512, 4}}},
      {K::kRms, true, 16384, 0, 4100, {N{512, 4}}},
      {K::kFusedAdd, false, 16384, 0, 4100, {N{512, 4}}},
      {K::kLayer, false, 16384, 0, 4100, {N{512, 4}, N{128, 16}}},
      {K::kRms, false, 2048, 0, 4100, {N{512, 4}}},
      {K::kLayer, false, 2048, 0, 4100, {N{512, 4}}},
      {K::kRms, false, 16384, 0, 4096, {}},  // the neighbour, 16-byte accesses, unchanged
      // LayerNorm's partly filled rows: 5120 (t256 i4: 2.5 accesses per thread), 12288 (t512
      // i4: 3), 2048 (t64 i4), 16384 (t512 i4).
      {K::kLayer, false, 16384, 0, 5120, {N{128, 8}}},
      {K::kLayer, false, 16384, 0, 12288, {N{256, 8}, N{1024, 2}}},
      {K::kLayer, false, 16384, 0, 2048, {N{128, 2}, N{32, 8}}},
      {K::kLayer, false, 16384, 0, 16384, {N{256, 8}}},
      // QK-norm with 64-wide heads: t2 r64 i4 over a prefetching resident grid.
      {K::kRms,
       false,
       16384,
       8,
       64,
       {N{8, 1, 32, true}, N{4, 2, 64, true}, N{2, 4, 64, false}, N{8, 1, 32, false}}},
  };
  for (int rep = 0; rep < 2; ++rep)
    for (const Row& r : list) {
      for (const N& k : r.forms) {
        const ops::NormSpec s = k.Spec();
        BenchModel(engine, r.kind, r.gemma, r.rows, r.heads, r.dim, &s,
                   fmt::format("ab{} forced", rep));
      }
      BenchModel(engine, r.kind, r.gemma, r.rows, r.heads, r.dim, nullptr,
                 fmt::format("ab{} default", rep));
    }
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--max-tokens")) g_max_tokens = std::atoll(argv[i + 1]);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ab") || !std::strcmp(argv[i], "--ab2")) {
      RunAb(engine, !std::strcmp(argv[i], "--ab2"));
      return 0;
    }
    if (!std::strcmp(argv[i], "--models")) {
      RunModels(engine);
      return 0;
    }
  }
  bool sweep = bench::DryRun();
  for (int i = 1; i < argc; ++i) sweep |= !std::strcmp(argv[i], "--sweep");
  for (int64_t rows : {1, 64, 2048}) Bench(engine, K::kRms, rows, 0, 4096);
  Bench(engine, K::kRms, 16384, 0, 4096, nullptr, true);
  Bench(engine, K::kRms, 8192, 0, 8192, nullptr, true);
  BenchCopy(size_t{8192} * 8192 * 2, "rmsnorm 8192x8192's bytes (2 x 134.2 MB)");
  Bench(engine, K::kRms, 4096, 0, 16384, nullptr, true);
  Bench(engine, K::kRms, 64, 32, 128);                    // QK-norm
  Bench(engine, K::kRms, 16384, 32, 128, nullptr, true);  // QK-norm
  for (int64_t rows : {1, 64}) Bench(engine, K::kFusedAdd, rows, 0, 4096);
  Bench(engine, K::kFusedAdd, 16384, 0, 4096, nullptr, true);
  Bench(engine, K::kFusedAdd, 8192, 0, 8192, nullptr, true);
  Bench(engine, K::kLayer, 64, 0, 8192);
  Bench(engine, K::kLayer, 8192, 0, 8192, nullptr, true);
  if (!sweep) return 0;
  // Alternatives (tools/bench/norm_sweep.h), each checked by tests/gpu/norm_variants_test.cc.
  for (const bench::NormSweepCase& c : bench::NormSweep())
    for (const bench::NormKnob& k : c.knobs) {
      const ops::NormSpec s = k.Spec();
      Bench(engine, c.kind, c.rows, c.heads, c.dim, &s, true);
    }
  return 0;
}
