// Every norm variant the benchmarks sweep (threads per row x items) is checked here against the
// fp64 reference, so that the one a future chooser picks has been run for correctness.
#include <fmt/format.h>

#include <array>
#include <catch2/catch.hpp>
#include <cmath>

#include "src/ops/norm/norm_run.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/half.h"
#include "tests/reference/norm_ref.h"

namespace flashjit::test {
namespace {

void RunForced(ops::NormKind kind, int64_t rows, int64_t hidden, int threads, int items,
               bool prefetch, std::mt19937& rng) {
  const DType dt = DType::kBF16;
  const bool fused = kind == ops::NormKind::kFusedAdd, layer = kind == ops::NormKind::kLayer;
  std::vector<float> x = RandomNormal(rows * hidden, rng, 1.f, layer ? 3.f : 0.f);
  std::vector<float> r = RandomNormal(rows * hidden, rng, 1.f);
  std::vector<float> w = RandomNormal(hidden, rng, 0.3f, 1.f), b = RandomNormal(hidden, rng, 0.5f);
  std::vector<double> xd, rd, wd, bd;
  DeviceBuffer dx = Upload16(dt, x, &xd), dr = Upload16(dt, r, &rd);
  DeviceBuffer dw = Upload16(dt, w, &wd), db = Upload16(dt, b, &bd);
  DeviceBuffer dout(rows * hidden * 2);
  dout.Fill(0xFF);
  ops::NormArgs a;
  a.kind = kind;
  a.input = TensorView::Contiguous(dx.data(), dt, {rows, hidden});
  a.residual = TensorView::Contiguous(dr.data(), dt, {rows, hidden});
  a.out = TensorView::Contiguous(dout.data(), dt, {rows, hidden});
  a.weight = TensorView::Contiguous(dw.data(), dt, {hidden});
  a.bias = TensorView::Contiguous(db.data(), dt, {hidden});
  a.eps = 1e-5f;
  ops::NormSpec force;
  force.threads = static_cast<uint16_t>(threads);
  force.items = static_cast<uint8_t>(items);
  force.prefetch = prefetch;
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
  INFO(fmt::format("kind {} rows {} hidden {} t{} i{} prefetch {}: {}", static_cast<int>(kind),
                   rows, hidden, threads, items, prefetch, e.ToString()));
  CHECK(e.non_finite == 0);
  CHECK(e.rel_l2 < 8e-3);
  if (fused) {
    ErrorStats er = Compare(Download16(dt, dr, rows * hidden), in);
    CHECK(er.max_abs == 0);
  }
}

TEST_CASE("norm: every swept variant matches the reference", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (auto kind : {ops::NormKind::kRms, ops::NormKind::kFusedAdd, ops::NormKind::kLayer})
    for (auto [threads, items] : std::vector<std::array<int, 2>>{
             {128, 8}, {256, 4}, {512, 2}, {1024, 1}, {64, 8}, {128, 4}, {256, 2}, {512, 1}})
      for (int64_t hidden : {4096, 8192}) {
        if (static_cast<int64_t>(threads) * items * 8 < hidden) continue;  // row must fit
        for (bool prefetch : {false, true})
          RunForced(kind, 1500, hidden, threads, items, prefetch, rng);
      }
  for (auto [threads, items] :
       std::vector<std::array<int, 2>>{{256, 8}, {512, 4}, {1024, 2}, {2 * 512, 4}})
    for (bool prefetch : {false, true})
      RunForced(ops::NormKind::kRms, 700, 16384, threads, items, prefetch, rng);
}

}  // namespace
}  // namespace flashjit::test
