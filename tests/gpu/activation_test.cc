// silu_and_mul, gelu_and_mul, gelu_tanh_and_mul against the fp64 reference.
#include <flashjit/activation.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/activation_ref.h"

namespace flashjit::test {
namespace {

void Run(ref::Gate gate, DType dtype, int64_t rows, int64_t d, int64_t out_pad, float stddev,
         std::mt19937& rng) {
  const int64_t out_stride = d + out_pad;
  std::vector<float> x = RandomNormal(rows * 2 * d, rng, stddev);
  std::vector<double> xd;
  DeviceBuffer dx = Upload16(dtype, x, &xd), dout(rows * out_stride * 2);
  dout.Fill(0xFF);
  TensorView tx = TensorView::Contiguous(dx.data(), dtype, {rows, 2 * d});
  TensorView to = TensorView::Contiguous(dout.data(), dtype, {rows, d});
  to.strides[0] = out_stride;
  Engine& e = TestEngine();
  Status s = gate == ref::Gate::kSilu   ? SiluAndMul(e, tx, to)
             : gate == ref::Gate::kGelu ? GeluAndMul(e, tx, to)
                                        : GeluTanhAndMul(e, tx, to);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> got = Download16(dtype, dout, rows * out_stride), g(rows * d);
  int64_t pad_written = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < d; ++c) g[r * d + c] = got[r * out_stride + c];
    for (int64_t c = d; c < out_stride; ++c) pad_written += !std::isnan(got[r * out_stride + c]);
  }
  ErrorStats err = Compare(g, ref::GatedActivation(xd, rows, d, gate));
  INFO(fmt::format("gate {} {} rows {} d {} pad {} stddev {}: {}", static_cast<int>(gate),
                   DTypeName(dtype), rows, d, out_pad, stddev, err.ToString()));
  CHECK(err.non_finite == 0);
  CHECK(err.rel_l2 < (dtype == DType::kBF16 ? 8e-3 : 1.5e-3));
  CHECK(pad_written == 0);
}

TEST_CASE("gated activations match the fp64 reference", "[gpu][layer][activation]") {
  std::mt19937 rng(Seed());
  for (ref::Gate gate : {ref::Gate::kSilu, ref::Gate::kGelu, ref::Gate::kGeluTanh})
    for (DType dtype : {DType::kBF16, DType::kF16}) {
      for (int64_t d : {1, 7, 64, 1000, 4096, 11008, 14336})
        for (int64_t rows : {1, 5, 64}) Run(gate, dtype, rows, d, 0, 1.f, rng);
      Run(gate, dtype, 9, 4096, 8, 1.f, rng);  // strided output rows
      Run(gate, dtype, 9, 4096, 3, 1.f, rng);  // odd stride: scalar path
      Run(gate, dtype, 16, 512, 0, 8.f, rng);  // saturating gates, large magnitudes
    }
}

}  // namespace
}  // namespace flashjit::test
