// Every norm variant the benchmarks sweep (threads per row x items) is checked here against the
// fp64 reference, so that the one a future chooser picks has been run for correctness.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "src/ops/norm/norm_run.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/half.h"
#include "tests/reference/norm_ref.h"
#include "tools/bench/norm_sweep.h"

namespace flashjit::test {
namespace {

void RunForced(ops::NormKind kind, int64_t rows, int64_t hidden, const ops::NormSpec& force,
               std::mt19937& rng) {
  const DType dt = DType::kBF16;
  const bool fused = kind == ops::NormKind::kFusedAdd, layer = kind == ops::NormKind::kLayer;
  std::vector<float> x = RandomNormal(rows * hidden, rng, 1.f, layer ? 3.f : 0.f);
  std::vector<float> r = RandomNormal(rows * hidden, rng, 1.f);
  std::vector<float> w = RandomNormal(hidden, rng, 0.3f, 1.f), b = RandomNormal(hidden, rng, 0.5f);
  std::vector<double> xd, rd, wd, bd;
  DeviceBuffer dx = Upload16(dt, x, &xd), dr = Upload16(dt, r, &rd);
  DeviceBuffer dw, db;
  if (layer) {  // f32 gamma and beta, as the benchmark times them
    dw = DeviceBuffer(hidden * 4);
    db = DeviceBuffer(hidden * 4);
    dw.Upload(w.data(), hidden * 4);
    db.Upload(b.data(), hidden * 4);
    wd.assign(w.begin(), w.end());
    bd.assign(b.begin(), b.end());
  } else {
    dw = Upload16(dt, w, &wd);
    db = Upload16(dt, b, &bd);
  }
  const DType wdt = layer ? DType::kF32 : dt;
  DeviceBuffer dout(rows * hidden * 2);
  dout.Fill(0xFF);
  ops::NormArgs a;
  a.kind = kind;
  a.input = TensorView::Contiguous(dx.data(), dt, {rows, hidden});
  a.residual = TensorView::Contiguous(dr.data(), dt, {rows, hidden});
  a.out = TensorView::Contiguous(dout.data(), dt, {rows, hidden});
  a.weight = TensorView::Contiguous(dw.data(), wdt, {hidden});
  a.bias = TensorView::Contiguous(db.data(), wdt, {hidden});
  a.eps = 1e-5f;
  Status s = ops::RunNorm(TestEngine(), a, nullptr, &force);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<double> in = xd;
  if (fused)
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = ref::Round16(dt, static_cast<float>(xd[i] + rd[i]));
  std::vector<double> want = layer ? ref::LayerNorm(in, wd, bd, rows, hidden, 1e-5)
                                   : ref::RmsNorm(in, wd, rows, hidden, 1e-5, false);
  ErrorStats e = Compare(Download16(dt, fused ? dx : dout, rows * hidden), want);
  INFO(fmt::format("kind {} rows {} hidden {} t{} r{} i{} pf {} gs {} wp {} cs {} mb {}: {}",
                   static_cast<int>(kind), rows, hidden, force.threads, force.rows, force.items,
                   force.prefetch, force.grid_stride, force.wprefetch, force.streaming, force.minb,
                   e.ToString()));
  CHECK(e.non_finite == 0);
  CHECK(e.rel_l2 < 8e-3);
  if (fused) {
    ErrorStats er = Compare(Download16(dt, dr, rows * hidden), in);
    CHECK(er.max_abs == 0);
  }
}

// Every variant tools/bench/norm_sweep.h lists (once: the sweep repeats some for its A/B rows), at
// the benchmark's hidden size and at a smaller odd multiple of 8 that leaves the last accesses of
// each thread's tile masked.
TEST_CASE("norm: every swept variant matches the reference", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (const bench::NormSweepCase& c : bench::NormSweep())
    for (int64_t hidden : {c.dim, c.dim / 8 * 6 + 8})
      for (auto k = c.knobs.begin(); k != c.knobs.end(); ++k)
        if (std::find(c.knobs.begin(), k, *k) == k)
          RunForced(c.kind, c.dim <= 128 ? 3001 : 701, hidden, k->Spec(), rng);
}

}  // namespace
}  // namespace flashjit::test
