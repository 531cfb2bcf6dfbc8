// The bulk-copy RMSNorm (templates/norm/norm_bulk.cuh) against the fp64 reference: every stage
// count, row sizes that are and are not a multiple of the block's tile, strided rows, enough
// rows that every block reuses its buffers (mbarrier phases flip), and the layouts where RunNorm
// must fall back to the ordinary kernel. The bulk copy mode (out = x) doubles as a probe of which
// kernel ran: where the bulk kernel runs it copies exactly, where RunNorm falls back the output
// is the norm.
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "src/ops/norm/norm_run.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/norm_test_util.h"
#include "tests/reference/norm_ref.h"

namespace flashjit::test {
namespace {

int Items(int64_t hidden, int threads) {
  int items = 1;
  while (int64_t{items} * threads * 8 < hidden) items *= 2;
  return items;
}

// rows x hidden with `pad` elements between rows (poisoned in the output, must stay so); 3-D
// ([rows, 1, hidden]) when `three_d`. `expect_bulk`: whether NormBulkFits should accept it.
void RunBulk(DType dtype, int64_t rows, int64_t hidden, int64_t pad, int stages, int threads,
             int mode, bool expect_bulk, bool gemma, std::mt19937& rng, bool three_d = false) {
  const int64_t stride = hidden + pad;
  std::vector<float> x = RandomNormal(rows * stride, rng, 1.5f);
  if (rows > 2)  // adversarial rows: all zeros (the output is 0), and a large magnitude
    for (int64_t c = 0; c < hidden; ++c) {
      x[stride + c] = 0.f;
      x[2 * stride + c] *= 1e3f;
    }
  std::vector<float> w = RandomNormal(hidden, rng, 0.5f, gemma ? 0.f : 1.f);
  std::vector<double> xd, wd;
  DeviceBuffer dx = Upload16(dtype, x, &xd), dw = Upload16(dtype, w, &wd);
  DeviceBuffer dout(rows * stride * 2);
  dout.Fill(0xFF);
  TensorView tx = three_d ? TensorView::Contiguous(dx.data(), dtype, {rows, 1, hidden})
                          : TensorView::Contiguous(dx.data(), dtype, {rows, hidden});
  TensorView to = three_d ? TensorView::Contiguous(dout.data(), dtype, {rows, 1, hidden})
                          : TensorView::Contiguous(dout.data(), dtype, {rows, hidden});
  tx.strides[0] = to.strides[0] = stride;
  ops::NormSpec force;
  force.threads = static_cast<uint16_t>(threads);
  force.items = static_cast<uint8_t>(Items(hidden, threads));
  force.bulk = static_cast<uint8_t>(mode);
  force.stages = static_cast<uint8_t>(stages);
  force.dtype = dtype;
  // What RunNorm sees: 16-byte accesses only when the row stride and the hidden size allow.
  const int vec = (stride % 8 == 0 && hidden % 8 == 0) ? 8 : (stride % 4 == 0 ? 4 : 1);
  CHECK(ops::NormBulkFits(force, three_d ? 3 : 2, hidden, vec, 2) == expect_bulk);
  ops::NormArgs a;
  a.kind = ops::NormKind::kRms;
  a.gemma = gemma;
  a.input = tx;
  a.out = to;
  a.weight = TensorView::Contiguous(dw.data(), dtype, {hidden});
  a.eps = 1e-6f;
  Status s = ops::RunNorm(TestEngine(), a, nullptr, &force);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> got = Download16(dtype, dout, rows * stride);
  std::vector<double> xr(rows * hidden);
  std::vector<float> gr(rows * hidden);
  int64_t pad_written = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < hidden; ++c) {
      xr[r * hidden + c] = xd[r * stride + c];
      gr[r * hidden + c] = got[r * stride + c];
    }
    for (int64_t c = hidden; c < stride; ++c) pad_written += !std::isnan(got[r * stride + c]);
  }
  const bool copied = mode == 2 && expect_bulk;
  const std::vector<double> want = copied ? xr : ref::RmsNorm(xr, wd, rows, hidden, 1e-6, gemma);
  ErrorStats e = Compare(gr, want);
  INFO(fmt::format("{} rows {} hidden {} pad {} stages {} threads {} mode {} bulk {} gemma {}: {}",
                   DTypeName(dtype), rows, hidden, pad, stages, threads, mode, expect_bulk, gemma,
                   e.ToString()));
  CHECK(e.non_finite == 0);
  CHECK(pad_written == 0);
  if (copied) {
    CHECK(e.max_abs == 0);
  } else {
    const double tol = dtype == DType::kBF16 ? 8e-3 : 1.5e-3;
    CHECK(e.rel_l2 < tol);
    CHECK(WorstRowRelL2(gr, want, rows, hidden) < tol);
  }
}

TEST_CASE("rmsnorm bulk kernel matches the reference", "[gpu][layer][norm][bulk]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (int stages : {2, 3, 4})
      for (int64_t hidden : {8192, 6152, 2056, 16384})
        for (int64_t rows : {1, 5, 3001}) {
          if (hidden == 16384 && rows == 3001) continue;  // below, once
          RunBulk(dtype, rows, hidden, 0, stages, 256, 1, true, false, rng);
        }
  for (int stages : {2, 3, 4}) {
    RunBulk(DType::kBF16, 2001, 4096, 8, stages, 128, 1, true, false, rng);  // strided rows
    RunBulk(DType::kBF16, 777, 8192, 0, stages, 128, 1, true, true, rng);    // gemma
    RunBulk(DType::kBF16, 3001, 8192, 0, stages, 512, 1, true, false, rng);  // 2 items
  }
  RunBulk(DType::kBF16, 1500, 16384, 0, 3, 256, 1, true, false, rng);
  RunBulk(DType::kBF16, 16384, 2056, 0, 3, 256, 1, true, false, rng);  // ~9 rows per block
}

TEST_CASE("rmsnorm bulk copy mode copies exactly; RunNorm falls back where bulk cannot run",
          "[gpu][layer][norm][bulk]") {
  std::mt19937 rng(Seed());
  for (int stages : {2, 3, 4}) {
    RunBulk(DType::kBF16, 3001, 8192, 0, stages, 256, 2, true, false, rng);
    RunBulk(DType::kF16, 2001, 4096, 8, stages, 128, 2, true, false, rng);
  }
  // Fallbacks (copy mode forced, the ordinary rmsnorm runs): 8-byte row stride; a hidden size
  // that is not a multiple of 8; 3-D input; rows too long for two buffers in 227 KB.
  RunBulk(DType::kBF16, 33, 4096, 4, 2, 256, 2, false, false, rng);
  RunBulk(DType::kBF16, 33, 1001, 0, 2, 128, 2, false, false, rng);
  RunBulk(DType::kBF16, 33, 4096, 0, 2, 256, 2, false, false, rng, /*three_d=*/true);
  RunBulk(DType::kBF16, 5, 65544, 0, 2, 1024, 2, false, false, rng);
}

// Small enough for memcheck and racecheck, yet every block walks many rows: 1024-thread blocks
// (two per SM) over 3001 rows, and 128 KB blocks (one per SM) over 700 rows of 16384; then the
// one-row-per-block form (stages 1).
TEST_CASE("rmsnorm bulk kernel, many rows per block; one row per block",
          "[gpu][layer][norm][bulk][bulk_sanitize]") {
  std::mt19937 rng(Seed());
  for (int stages : {2, 3, 4})
    for (int mode : {1, 2})
      RunBulk(DType::kBF16, 3001, 2056, 0, stages, 1024, mode, true, false, rng);
  RunBulk(DType::kBF16, 700, 16384, 0, 4, 256, 1, true, false, rng);
  // One row per block (stages 1, full grid).
  for (int mode : {1, 2}) {
    RunBulk(DType::kBF16, 3001, 8192, 0, 1, 64, mode, true, false, rng);
    RunBulk(DType::kF16, 1001, 6152, 8, 1, 128, mode, true, mode == 1, rng);
    RunBulk(DType::kBF16, 5, 16384, 0, 1, 256, mode, true, false, rng);
  }
}

}  // namespace
}  // namespace flashjit::test
