// Normalization bandwidth. Bytes that must move: read x (+ residual), write out (+ residual),
// weights once. Inputs rotate over enough copies to exceed the 60 MB L2.
//   flashjit_bench_norm [--dry-run] [--sweep] [--ab]   (--sweep also times alternative variants;
//   --ab times only the session-12 A/B list: rmsnorm 8192x8192 and 16384x4096 over cache hints,
//   beside copies of the same bytes by our kernels and by the driver, PDL off / on)
//
// Three timings per case: `us` = one call between two events (what a server sees for an
// isolated op, including the ~4.5 µs host enqueue of the launch when the GPU is idle), `queued`
// = one call between two events with the host enqueue hidden behind a spin kernel
// (bench::QueuedMicros), and, for the large shapes, `b2b` = 20 calls back to back between two
// events, per call (the kernel's own duration plus the gap between consecutive kernels).
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "src/ops/common/pdl.h"
#include "src/ops/norm/norm_run.h"
#include "src/runtime/driver.h"
#include "tools/bench/bench_util.h"
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
  return fmt::format("t{} r{} i{}{}{}{}{}{}{}{}", s.threads, s.rows, s.items,
                     s.prefetch ? " pf" : "", s.grid_stride ? " gs" : "", s.wprefetch ? " wp" : "",
                     s.streaming ? "" : " no-cs", s.minb ? fmt::format(" mb{}", s.minb) : "",
                     s.ldh || s.sth ? fmt::format(" lh{} sh{}", s.ldh, s.sth) : "",
                     s.diag ? fmt::format(" dg{}", s.diag) : "") +
         (s.split ? " split" : "");
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
  auto view = [&](void* p) {
    return heads ? TensorView::Contiguous(p, kDt, {rows, heads, dim})
                 : TensorView::Contiguous(p, kDt, {rows, dim});
  };
  auto run = [&](int i) {
    const int c = i % copies;
    ops::NormArgs a;
    a.kind = kind;
    a.input = view(xs[c]);
    a.out = view(outs[c]);
    a.residual = view(outs[c]);
    a.weight = TensorView::Contiguous(w, wdt, {dim});
    a.bias = TensorView::Contiguous(b, wdt, {dim});
    Check(ops::RunNorm(engine, a, nullptr, force));
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
  const char* name = force && force->diag
                         ? "copy_ours"
                         : (fused ? "fused_add_rmsnorm" : (layer ? "layernorm" : "rmsnorm"));
  const std::string shape =
      heads ? fmt::format("bf16 {}x{}x{}", rows, heads, dim) : fmt::format("bf16 {}x{}", rows, dim);
  const double moved = (fused ? 4.0 : 2.0) * bytes + dim * (layer ? 8 : 2);
  const ops::NormSpec chosen =
      force ? *force
            : ops::ChooseNorm(kind, kDt, wdt, dim, 8, /*gemma=*/false, rows * (heads ? heads : 1));
  std::string note = fmt::format("{} {}", force ? "sweep" : "default", Describe(chosen));
  if (ops::PdlMode() == 0) note += " pdl-off";
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

}  // namespace

// Session 12 A/B (--ab): rmsnorm 8192x8192 over cache hints (lh = load hint, sh = store hint,
// templates/common/hint_io.cuh) and the copies of its bytes by our kernels (dg 1: the one-pass
// block structure without the reduction; dg 2: the same without its barrier; dg 3: a flat
// grid-stride copy over a resident grid) and by the driver, PDL off / on; the row split over a
// cluster of two blocks ("split"); then 16384x4096 over hints, and flat copies of the append's
// bytes (8192x4096 = 2 x 67.1 MB). `reps` rounds, the same order each round.
void AbList(Engine& engine, int reps) {
  struct Row {
    int64_t rows, dim;
    int threads, items, mb, ldh, sth, diag;
    bool pdl_off, split = false;
  };
  const std::vector<Row> list = {
      {8192, 8192, 128, 8, 0, 0, 0, 0, false},
      {8192, 8192, 128, 8, 0, 1, 1, 0, false},
      {8192, 8192, 128, 8, 0, 2, 2, 0, false},
      {8192, 8192, 128, 8, 0, 4, 1, 0, false},
      {8192, 8192, 128, 8, 0, 1, 0, 0, false},
      {8192, 8192, 128, 8, 0, 0, 1, 0, false},
      {8192, 8192, 128, 8, 0, 3, 0, 0, false},
      {8192, 8192, 128, 8, 0, 0, 3, 0, false},
      {8192, 8192, 128, 8, 0, 0, 4, 0, false},
      {8192, 8192, 128, 8, 0, 5, 5, 0, false},
      {8192, 8192, 128, 8, 0, 0, 0, 0, true},
      {8192, 8192, 128, 8, 0, 0, 0, 1, false},
      {8192, 8192, 128, 8, 0, 0, 0, 2, false},
      {8192, 8192, 128, 8, 0, 0, 0, 2, true},
      {8192, 8192, 128, 8, 0, 1, 1, 2, false},
      {8192, 8192, 128, 8, 0, 2, 2, 2, false},
      {8192, 8192, 128, 8, 0, 0, 0, 3, false},
      {8192, 8192, 128, 4, 0, 0, 0, 3, false},
      {8192, 8192, 128, 2, 0, 0, 0, 3, false},
      {8192, 8192, 128, 8, 0, 1, 1, 3, false},
      {8192, 8192, 128, 4, 0, 2, 2, 3, false},
      {8192, 8192, 128, 4, 0, 0, 0, 3, true},
      {8192, 8192, 128, 4, 0, 0, 0, 0, false, true},
      {8192, 8192, 128, 4, 16, 0, 0, 0, false, true},
      {8192, 8192, 64, 8, 0, 0, 0, 0, false, true},
      {8192, 8192, 256, 2, 0, 0, 0, 0, false, true},
      {8192, 8192, 128, 4, 16, 1, 1, 0, false, true},
      {8192, 8192, 128, 8, 0, 0, 0, 0, false},
      {16384, 4096, 128, 4, 16, 0, 0, 0, false},
      {16384, 4096, 128, 2, 16, 0, 0, 0, false, true},
      {16384, 4096, 128, 4, 16, 1, 1, 0, false},
      {16384, 4096, 128, 4, 16, 2, 2, 0, false},
      {16384, 4096, 128, 4, 16, 0, 1, 0, false},
      {16384, 4096, 128, 4, 16, 1, 0, 0, false},
      {8192, 4096, 128, 4, 0, 0, 0, 3, false},
      {8192, 4096, 128, 2, 0, 0, 0, 3, false},
      {8192, 4096, 128, 4, 0, 1, 1, 3, false},
      {8192, 4096, 128, 4, 0, 0, 0, 2, false},
  };
  for (int rep = 0; rep < reps; ++rep) {
    BenchCopy(size_t{8192} * 8192 * 2, fmt::format("rmsnorm 8192x8192's bytes rep {}", rep));
    for (const Row& r : list) {
      if (&r == &list[list.size() - 4])  // the first row of the append's bytes
        BenchCopy(size_t{8192} * 4096 * 2, fmt::format("append's bytes (8192x4096) rep {}", rep));
      ops::NormSpec s;
      s.threads = static_cast<uint16_t>(r.threads);
      s.items = static_cast<uint8_t>(r.items);
      s.prefetch = 0;
      s.minb = static_cast<uint8_t>(r.mb);
      s.ldh = static_cast<uint8_t>(r.ldh);
      s.sth = static_cast<uint8_t>(r.sth);
      s.diag = static_cast<uint8_t>(r.diag);
      s.split = r.split;
      if (r.pdl_off) ops::SetPdlForTesting(0);
      Bench(engine, K::kRms, r.rows, 0, r.dim, &s, true);
      if (r.pdl_off) ops::SetPdlForTesting(-1);
    }
  }
}

// Session 12 call 2 (--ab2): the fixed cost and the slope of a call against its bytes. The
// driver's copy, our copy in the norm's block structure (dg 2) and the rmsnorm kernel (both
// forced to 128 threads x 8 accesses, one 16 KB row per block) over 4 .. 32768 rows of 8192.
void Ab2List(Engine& engine) {
  for (int rep = 0; rep < (bench::DryRun() ? 1 : 3); ++rep)
    for (int64_t rows : {4, 64, 4096, 8192, 16384, 32768}) {
      BenchCopy(size_t(rows) * 8192 * 2, fmt::format("{} rows of 8192 (rep {})", rows, rep));
      for (int diag : {2, 0}) {
        ops::NormSpec s;
        s.threads = 128;
        s.items = 8;
        s.prefetch = 0;
        s.diag = static_cast<uint8_t>(diag);
        Bench(engine, K::kRms, rows, 0, 8192, &s, true);
      }
    }
}

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ab2")) {
      Ab2List(engine);
      return 0;
    }
  }
  bool sweep = bench::DryRun();
  for (int i = 1; i < argc; ++i) sweep |= !std::strcmp(argv[i], "--sweep");
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ab")) {
      AbList(engine, bench::DryRun() ? 1 : 5);
      return 0;
    }
  }
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
