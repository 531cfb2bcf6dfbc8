// QK-norm (3-D), fused add + RMSNorm, Gemma variants and LayerNorm against fp64 references.
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/norm_test_util.h"
#include "tests/reference/half.h"
#include "tests/reference/norm_ref.h"

namespace flashjit::test {
namespace {

double Tolerance(DType dtype) { return dtype == DType::kBF16 ? 8e-3 : 1.5e-3; }

// Gathers rows of `hidden` elements at `offset(r)` from a host copy of a strided buffer.
template <class F>
std::vector<double> Gather(const std::vector<float>& buf, int64_t rows, int64_t hidden, F offset) {
  std::vector<double> out(rows * hidden);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < hidden; ++c) out[r * hidden + c] = buf[offset(r) + c];
  return out;
}

// 3-D [tokens, heads, head_dim] views cut out of a [tokens, width] buffer (like q of a fused qkv
// tensor): token stride `width`, head stride head_dim; everything outside stays poisoned.
void RunQkNorm(DType dtype, int64_t tokens, int64_t heads, int64_t head_dim, bool gemma,
               std::mt19937& rng) {
  const int64_t width = heads * head_dim + 3 * head_dim;
  std::vector<float> x = RandomNormal(tokens * width, rng, 1.5f);
  std::vector<float> w = RandomNormal(head_dim, rng, 0.3f, gemma ? 0.f : 1.f);
  std::vector<double> xd, wd;
  DeviceBuffer dx = Upload16(dtype, x, &xd), dw = Upload16(dtype, w, &wd);
  DeviceBuffer dout(tokens * width * 2);
  dout.Fill(0xFF);
  TensorView tx = TensorView::Contiguous(dx.data(), dtype, {tokens, heads, head_dim});
  TensorView to = TensorView::Contiguous(dout.data(), dtype, {tokens, heads, head_dim});
  tx.strides[0] = to.strides[0] = width;
  Status s = RmsNorm(TestEngine(), tx, TensorView::Contiguous(dw.data(), dtype, {head_dim}), to,
                     1e-6f, gemma);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> got = Download16(dtype, dout, tokens * width);
  const int64_t rows = tokens * heads;
  auto off = [&](int64_t r) { return (r / heads) * width + (r % heads) * head_dim; };
  std::vector<double> xr(rows * head_dim);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < head_dim; ++c) xr[r * head_dim + c] = xd[off(r) + c];
  std::vector<double> ref = ref::RmsNorm(xr, wd, rows, head_dim, 1e-6, gemma);
  std::vector<float> g(rows * head_dim);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < head_dim; ++c) g[r * head_dim + c] = got[off(r) + c];
  ErrorStats e = Compare(g, ref);
  const double worst = WorstRowRelL2(g, ref, rows, head_dim);
  INFO(fmt::format("worst row {}", worst));
  CHECK(worst < 2 * Tolerance(dtype));
  INFO(fmt::format("qk-norm {} tokens {} heads {} dim {} gemma {}: {}", DTypeName(dtype), tokens,
                   heads, head_dim, gemma, e.ToString()));
  CHECK(e.non_finite == 0);
  CHECK(e.rel_l2 < Tolerance(dtype));
  int64_t touched = 0;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = heads * head_dim; c < width; ++c) touched += !std::isnan(got[t * width + c]);
  CHECK(touched == 0);
}

void RunFusedAdd(DType dtype, int64_t rows, int64_t hidden, bool gemma, std::mt19937& rng) {
  const int64_t stride = hidden + 8;  // padding between rows must stay untouched
  std::vector<float> x = RandomNormal(rows * stride, rng, 1.f);
  std::vector<float> res = RandomNormal(rows * stride, rng, 2.f);
  std::vector<float> w = RandomNormal(hidden, rng, 0.3f, gemma ? 0.f : 1.f);
  std::vector<double> xd, rd, wd;
  DeviceBuffer dx = Upload16(dtype, x, &xd), dr = Upload16(dtype, res, &rd);
  DeviceBuffer dw = Upload16(dtype, w, &wd);
  TensorView tx = TensorView::Contiguous(dx.data(), dtype, {rows, hidden});
  TensorView tr = TensorView::Contiguous(dr.data(), dtype, {rows, hidden});
  tx.strides[0] = tr.strides[0] = stride;
  TensorView tw = TensorView::Contiguous(dw.data(), dtype, {hidden});
  Status s = gemma ? GemmaFusedAddRmsNorm(TestEngine(), tx, tr, tw, 1e-5f)
                   : FusedAddRmsNorm(TestEngine(), tx, tr, tw, 1e-5f);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> gx = Download16(dtype, dx, rows * stride);
  std::vector<float> gr = Download16(dtype, dr, rows * stride);
  // residual' = round(x + residual); x' = rmsnorm(residual').
  std::vector<double> sum(rows * hidden);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < hidden; ++c)
      sum[r * hidden + c] =
          ref::Round16(dtype, static_cast<float>(xd[r * stride + c] + rd[r * stride + c]));
  std::vector<double> ref_x = ref::RmsNorm(sum, wd, rows, hidden, 1e-5, gemma);
  auto off = [&](int64_t r) { return r * stride; };
  std::vector<double> got_x = Gather(gx, rows, hidden, off), got_r = Gather(gr, rows, hidden, off);
  ErrorStats ex = Compare(std::vector<float>(got_x.begin(), got_x.end()), ref_x);
  ErrorStats er = Compare(std::vector<float>(got_r.begin(), got_r.end()), sum);
  INFO(fmt::format("fused add {} rows {} hidden {} gemma {}: x {} residual {}", DTypeName(dtype),
                   rows, hidden, gemma, ex.ToString(), er.ToString()));
  CHECK(ex.non_finite == 0);
  CHECK(ex.rel_l2 < Tolerance(dtype));
  if (hidden >= 128)
    CHECK(WorstRowRelL2(std::vector<float>(got_x.begin(), got_x.end()), ref_x, rows, hidden) <
          Tolerance(dtype) * 1.5);
  CHECK(er.max_abs == 0);  // the residual is exactly the rounded sum
  int64_t changed = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = hidden; c < stride; ++c)
      changed += gx[r * stride + c] != static_cast<float>(xd[r * stride + c]) ||
                 gr[r * stride + c] != static_cast<float>(rd[r * stride + c]);
  CHECK(changed == 0);
}

// Rows of mean + N(0, std) rounded to `dtype`; row 1 constant (variance 0, output = beta) and
// row 2's first element 300 std above the rest (a shift taken from a row's first element would be
// far from its mean there). A large mean with a small std is where E[x^2] - E[x]^2 in fp32 fails.
void RunLayerNorm(DType dtype, DType wdtype, int64_t rows, int64_t hidden, float mean,
                  std::mt19937& rng, float std = 1.f) {
  std::vector<float> x = RandomNormal(rows * hidden, rng, std, mean);
  if (rows > 1)  // one constant row: variance 0, output = beta
    for (int64_t c = 0; c < hidden; ++c) x[hidden + c] = 0.75f;
  if (rows > 2) x[2 * hidden] = mean + 300.f * std;
  std::vector<float> g = RandomNormal(hidden, rng, 0.3f, 1.f), b = RandomNormal(hidden, rng, 0.5f);
  std::vector<double> xd, gd, bd;
  DeviceBuffer dx = Upload16(dtype, x, &xd);
  DeviceBuffer dg, db;
  if (wdtype == DType::kF32) {
    dg = DeviceBuffer(hidden * 4);
    db = DeviceBuffer(hidden * 4);
    dg.Upload(g.data(), hidden * 4);
    db.Upload(b.data(), hidden * 4);
    gd.assign(g.begin(), g.end());
    bd.assign(b.begin(), b.end());
  } else {
    dg = Upload16(wdtype, g, &gd);
    db = Upload16(wdtype, b, &bd);
  }
  DeviceBuffer dout(rows * hidden * 2);
  dout.Fill(0xFF);
  Status s = LayerNorm(TestEngine(), TensorView::Contiguous(dx.data(), dtype, {rows, hidden}),
                       TensorView::Contiguous(dg.data(), wdtype, {hidden}),
                       TensorView::Contiguous(db.data(), wdtype, {hidden}),
                       TensorView::Contiguous(dout.data(), dtype, {rows, hidden}), 1e-5f);
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<float> got = Download16(dtype, dout, rows * hidden);
  const std::vector<double> want = ref::LayerNorm(xd, gd, bd, rows, hidden, 1e-5);
  ErrorStats e = Compare(got, want);
  if (hidden >= 128) CHECK(WorstRowRelL2(got, want, rows, hidden) < Tolerance(dtype) * 1.5);
  INFO(fmt::format("layernorm {} w {} rows {} hidden {} mean {}: {}", DTypeName(dtype),
                   DTypeName(wdtype), rows, hidden, mean, e.ToString()));
  CHECK(e.non_finite == 0);
  CHECK(e.rel_l2 < Tolerance(dtype));
}

TEST_CASE("rmsnorm on 3-D QK-norm views of a fused qkv buffer", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (int64_t head_dim : {64, 128, 256, 72})
      for (int64_t tokens : {1, 5, 300}) RunQkNorm(dtype, tokens, 8, head_dim, false, rng);
  RunQkNorm(DType::kBF16, 17, 32, 128, true, rng);
}

TEST_CASE("fused_add_rmsnorm updates residual and input in place", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (int64_t hidden : {8, 128, 1000, 2048, 4096, 5120, 8200, 16384, 16392, 200000})
      for (int64_t rows : {1, 33}) RunFusedAdd(dtype, rows, hidden, false, rng);
  RunFusedAdd(DType::kBF16, 65, 4096, true, rng);
  RunFusedAdd(DType::kF16, 3, 1000, true, rng);
  RunFusedAdd(DType::kBF16, 7, 13, false, rng);  // odd hidden: scalar path
}

TEST_CASE("layernorm matches the fp64 reference", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (DType wdtype : {dtype, DType::kF32})
      for (int64_t hidden : {64, 1000, 4096, 8192, 12296, 140000})
        RunLayerNorm(dtype, wdtype, 9, hidden, 0.f, rng);
  RunLayerNorm(DType::kBF16, DType::kF32, 31, 4096, 40.f, rng);  // large mean, two-pass variance
  RunLayerNorm(DType::kF16, DType::kF16, 3, 7, 0.f, rng);
}

// Large mean, small variance (mean / std = 1000 and 125, 16-bit grids at 1000: 0.5 for f16, 4 for
// bf16) through the kernels the chooser picks at server batch sizes (> 128 rows: 128 or 256
// threads per row), and at few rows (one access per thread).
TEST_CASE("layernorm: large mean with small variance", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (int64_t hidden : {8192, 4096, 2056, 1000}) {
    RunLayerNorm(DType::kF16, DType::kF32, 300, hidden, 1000.f, rng, 1.f);
    RunLayerNorm(DType::kBF16, DType::kF32, 300, hidden, 1000.f, rng, 8.f);
    RunLayerNorm(DType::kF16, DType::kF16, 300, hidden, -1000.f, rng, 1.f);
  }
  RunLayerNorm(DType::kF16, DType::kF32, 5, 8192, 1000.f, rng, 1.f);
  RunLayerNorm(DType::kBF16, DType::kBF16, 5, 4096, 1000.f, rng, 8.f);
  // Rows longer than the register tile take the streaming path (two passes over the row).
  RunLayerNorm(DType::kF16, DType::kF32, 3, 140000, 1000.f, rng, 1.f);
  RunLayerNorm(DType::kBF16, DType::kBF16, 3, 140008, -1000.f, rng, 8.f);
}

TEST_CASE("gemma_rmsnorm and adversarial magnitudes", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  const DType dt = DType::kBF16;
  for (float scale : {1e-3f, 1e3f}) {
    const int64_t rows = 4, hidden = 4096;
    std::vector<float> x = RandomNormal(rows * hidden, rng, scale);
    std::vector<float> w = RandomNormal(hidden, rng, 0.2f);
    std::vector<double> xd, wd;
    DeviceBuffer dx = Upload16(dt, x, &xd), dw = Upload16(dt, w, &wd), dout(rows * hidden * 2);
    dout.Fill(0xFF);
    Status s = GemmaRmsNorm(TestEngine(), TensorView::Contiguous(dx.data(), dt, {rows, hidden}),
                            TensorView::Contiguous(dw.data(), dt, {hidden}),
                            TensorView::Contiguous(dout.data(), dt, {rows, hidden}), 1e-6f);
    REQUIRE(s.ok());
    Synchronize();
    if (DryRun()) continue;
    ErrorStats e = Compare(Download16(dt, dout, rows * hidden),
                           ref::RmsNorm(xd, wd, rows, hidden, 1e-6, true));
    INFO(fmt::format("gemma scale {}: {}", scale, e.ToString()));
    CHECK(e.non_finite == 0);
    CHECK(e.rel_l2 < 8e-3);
  }
}

// Server-sized batches (16k tokens) for fused add, LayerNorm and QK-norm; hidden sizes an odd
// multiple of 8 and not a multiple of 8.
TEST_CASE("fused add, layernorm and QK-norm at 16k tokens", "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  RunFusedAdd(DType::kBF16, 16384, 2056, false, rng);
  RunFusedAdd(DType::kF16, 16384, 1001, true, rng);
  RunLayerNorm(DType::kBF16, DType::kF32, 16384, 2056, 0.f, rng);
  RunLayerNorm(DType::kF16, DType::kF16, 16384, 1000, 5.f, rng);
  RunQkNorm(DType::kBF16, 16384, 8, 128, false, rng);
}

// Fused add and LayerNorm at hidden sizes that are not a multiple of 8, over more than 128 rows
// (the chooser's threads by 16-byte units, session 13: LayerNorm 4100 takes 256 threads x 8
// accesses of 4 elements, fused add 128 x 16).
TEST_CASE("fused add and layernorm: hidden sizes not a multiple of 8 over more than 128 rows",
          "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (int64_t hidden : {4100, 6148, 12292, 4098}) {
    RunFusedAdd(DType::kBF16, 300, hidden, false, rng);
    RunLayerNorm(DType::kBF16, DType::kF32, 300, hidden, 0.f, rng);
  }
  RunFusedAdd(DType::kF16, 1000, 4100, true, rng);
  RunLayerNorm(DType::kF16, DType::kF16, 1000, 4100, 1000.f, rng, 1.f);  // large mean
  RunLayerNorm(DType::kBF16, DType::kBF16, 2000, 4100, 5.f, rng);
}

// The chooser's session-13 rules for LayerNorm over 8192 < hidden <= 16384 at more than 128
// rows (256 threads, up to 8 accesses each) and for QK-norm with 64-wide heads (8 threads per
// row, 32 rows per block, one block per group): against the fp64 reference, padding poisoned.
TEST_CASE("layernorm above hidden 8192 and QK-norm with 64-wide heads at server batch sizes",
          "[gpu][layer][norm]") {
  std::mt19937 rng(Seed());
  for (int64_t hidden : {8200, 10240, 12288, 16384}) {
    RunLayerNorm(DType::kBF16, DType::kF32, 300, hidden, 0.f, rng);
    RunLayerNorm(DType::kF16, DType::kF16, 300, hidden, 1000.f, rng, 1.f);  // large mean
  }
  RunLayerNorm(DType::kBF16, DType::kBF16, 1000, 12288, 5.f, rng);
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    RunQkNorm(dtype, 2000, 8, 64, false, rng);
    RunQkNorm(dtype, 333, 5, 64, true, rng);
    RunQkNorm(dtype, 77, 3, 40, false, rng);  // 5 accesses of 8 per row
  }
}

}  // namespace
}  // namespace flashjit::test
