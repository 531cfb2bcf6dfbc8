// RMSNorm on the GPU against the double-precision reference.
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/norm_test_util.h"
#include "tests/reference/norm_ref.h"

namespace flashjit::test {
namespace {

void RunRmsNorm(DType dtype, int64_t rows, int64_t hidden, bool gemma, int64_t row_pad,
                std::mt19937& rng) {
  const int64_t stride = hidden + row_pad;
  std::vector<float> x = RandomNormal(rows * stride, rng, 2.f);
  std::vector<float> w = RandomNormal(hidden, rng, 0.5f, 1.f);
  std::vector<double> xd, wd;
  DeviceBuffer dx = Upload16(dtype, x, &xd), dw = Upload16(dtype, w, &wd);
  DeviceBuffer dout(rows * stride * 2);
  dout.Fill(0xFF);
  TensorView tx = TensorView::Contiguous(dx.data(), dtype, {rows, hidden});
  TensorView tout = TensorView::Contiguous(dout.data(), dtype, {rows, hidden});
  tx.strides[0] = tout.strides[0] = stride;
  TensorView tw = TensorView::Contiguous(dw.data(), dtype, {hidden});
  Status s = RmsNorm(TestEngine(), tx, tw, tout, 1e-6f, gemma, nullptr);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> got = Download16(dtype, dout, rows * stride);
  std::vector<double> xr(rows * hidden);
  std::vector<float> gr(rows * hidden);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < hidden; ++c) {
      xr[r * hidden + c] = xd[r * stride + c];
      gr[r * hidden + c] = got[r * stride + c];
    }
  std::vector<double> ref = ref::RmsNorm(xr, wd, rows, hidden, 1e-6, gemma);
  ErrorStats e = Compare(gr, ref);
  INFO(fmt::format("{} rows {} hidden {} gemma {} pad {}: {}", DTypeName(dtype), rows, hidden,
                   gemma, row_pad, e.ToString()));
  CHECK(e.non_finite == 0);
  CHECK(e.rel_l2 < (dtype == DType::kBF16 ? 8e-3 : 1e-3));
  if (hidden >= 128)
    CHECK(WorstRowRelL2(gr, ref, rows, hidden) < (dtype == DType::kBF16 ? 8e-3 : 1.5e-3));
  // Padding between rows is never written.
  for (int64_t r = 0; r < rows && row_pad; ++r)
    for (int64_t c = hidden; c < stride; ++c) CHECK(std::isnan(got[r * stride + c]));
}

TEST_CASE("rmsnorm matches the fp64 reference over a sweep of shapes", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int64_t hidden :
         {1, 7, 128, 1000, 1002, 1024, 2052, 4096, 4104, 5120, 8192, 16384, 16392, 65544}) {
      for (int64_t rows : {1, 3, 64}) RunRmsNorm(dtype, rows, hidden, false, 0, rng);
    }
    RunRmsNorm(dtype, 257, 4096, true, 0, rng);
    RunRmsNorm(dtype, 33, 2048, false, 8, rng);  // strided rows, still vectorised
    RunRmsNorm(dtype, 17, 2048, false, 3, rng);  // odd stride: scalar path
  }
}

// Server-sized batches: 16k tokens at hidden sizes that are an odd multiple of 8 (strided rows,
// padding poisoned and checked) and not a multiple of 8 (scalar accesses), and a 16384 hidden.
TEST_CASE("rmsnorm at 16k tokens", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  RunRmsNorm(DType::kBF16, 16384, 2056, false, 8, rng);
  RunRmsNorm(DType::kF16, 16384, 1001, true, 0, rng);
  RunRmsNorm(DType::kBF16, 16384, 128, false, 0, rng);
  RunRmsNorm(DType::kBF16, 2048, 16384, false, 0, rng);
  RunRmsNorm(DType::kF16, 9000, 4096, false, 0, rng);
}

// Hidden sizes that are not a multiple of 8 (rows only 8- or 4-byte aligned: 4- or 2-element
// accesses) over more than 128 rows, where the chooser sizes threads by the row's 16-byte units
// (session 13): 4100 and 6148 take 128 threads x 16 accesses, 12292 and 8196 512 x 8, 2052
// 128 x 8, 4098 (2-element accesses) the rule by accesses; a padded row stride of a
// multiple-of-8 hidden size; Gemma and f16.
TEST_CASE("rmsnorm: hidden sizes not a multiple of 8 over more than 128 rows",
          "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (int64_t hidden : {4100, 6148, 12292, 8196, 2052, 4098})
    RunRmsNorm(DType::kBF16, 300, hidden, false, 0, rng);
  RunRmsNorm(DType::kF16, 2000, 4100, true, 0, rng);
  RunRmsNorm(DType::kBF16, 1000, 4100, true, 4, rng);  // padding poisoned and checked
  RunRmsNorm(DType::kBF16, 129, 4096, false, 4, rng);  // stride 4100: 4-element accesses
}

}  // namespace
}  // namespace flashjit::test
