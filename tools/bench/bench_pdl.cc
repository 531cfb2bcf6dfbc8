// Programmatic dependent launch (PDL) on the layer ops, off against on in adjacent rows (run to
// run drift), twice: each op's synced time (one call between two events, host enqueue included)
// and back-to-back time (per call of 50 calls enqueued together: the kernel plus the gap between
// kernels, which PDL should shrink), at the small shapes of a decode step and the large shapes of
// bench_norm / bench_rope / bench_activation / bench_page; then one Llama-3.1-8B layer's layer
// ops at batch 32 as a chain (rmsnorm -> RoPE in place -> append -> fused_add_rmsnorm ->
// silu_and_mul), back to back.
//   flashjit_bench_pdl [--dry-run] [--once]
#include <flashjit/activation.h>
#include <flashjit/norm.h>
#include <flashjit/page.h>
#include <flashjit/rope.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/ops/common/pdl.h"
#include "src/runtime/driver.h"
#include "tools/bench/append_layout.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;

namespace {

constexpr DType kDt = DType::kBF16;

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

int Copies(size_t bytes) {
  return bytes >= (64u << 20) ? 1 : std::min<int>(64, static_cast<int>((160u << 20) / bytes + 1));
}

std::vector<void*> Random16(int n, size_t bytes) {
  std::vector<void*> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(bench::DeviceAlloc(bytes));
    bench::DeviceFillRandom16(v.back(), bytes / 2, 1.f);
  }
  return v;
}

void* UploadI32(const std::vector<int32_t>& v) {
  void* p = bench::DeviceAlloc(v.size() * 4 + 4);
  if (!bench::DryRun())
    (*runtime::Driver())->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(p), v.data(), v.size() * 4);
  return p;
}
TensorView I32(void* p, int64_t n) { return TensorView::Contiguous(p, DType::kI32, {n}); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Off, on, off, on: synced median and the median of 7 back-to-back batches of 50 calls.
void AB(const std::string& name, const std::string& shape, double bytes,
        const std::function<void(int)>& fn) {
  for (int rep = 0; rep < 2; ++rep)
    for (int pdl : {0, 1}) {
      ops::SetPdlForTesting(pdl);
      const double us = bench::MedianMicros(fn);
      std::vector<double> b2b;
      for (int k = 0; k < 7 && !bench::DryRun() && !bench::Once(); ++k)
        b2b.push_back(bench::BackToBackMicros(fn));
      bench::Report(name, shape, us, bytes, 0,
                    fmt::format("pdl {} rep {}{}", pdl ? "on " : "off", rep,
                                bench::BackToBackNote(Median(b2b), bytes)));
      if (bench::DryRun() || bench::Once()) break;  // one build / one profiled call per shape
    }
  ops::SetPdlForTesting(-1);
}

enum class NormOp { kRms, kFusedAdd, kLayer };

std::function<void(int)> Norm(Engine& e, NormOp op, int64_t rows, int64_t heads, int64_t dim,
                              double* bytes) {
  const int64_t n = rows * (heads ? heads : 1) * dim;
  const size_t b = n * 2;
  const int copies = Copies(b * (op == NormOp::kFusedAdd ? 2 : 1));
  auto xs = Random16(copies, b), outs = Random16(copies, b);
  const DType wdt = op == NormOp::kLayer ? DType::kF32 : kDt;
  void* w = Random16(1, dim * 4)[0];
  void* bias = Random16(1, dim * 4)[0];
  *bytes = (op == NormOp::kFusedAdd ? 4.0 : 2.0) * b + dim * 2;
  auto view = [=](void* p) {
    return heads ? TensorView::Contiguous(p, kDt, {rows, heads, dim})
                 : TensorView::Contiguous(p, kDt, {rows, dim});
  };
  return [=, &e](int i) {
    const int c = i % copies;
    const TensorView wv = TensorView::Contiguous(w, wdt, {dim});
    switch (op) {
      case NormOp::kRms:
        return Check(RmsNorm(e, view(xs[c]), wv, view(outs[c])));
      case NormOp::kFusedAdd:
        return Check(FusedAddRmsNorm(e, view(xs[c]), view(outs[c]), wv));
      case NormOp::kLayer:
        return Check(
            LayerNorm(e, view(xs[c]), wv, TensorView::Contiguous(bias, wdt, {dim}), view(outs[c])));
    }
  };
}

enum class Gate { kSilu, kGelu, kGeluTanh };

std::function<void(int)> Act(Engine& e, Gate g, int64_t rows, int64_t d, double* bytes) {
  const size_t in_b = rows * 2 * d * 2, out_b = rows * d * 2;
  const int copies = Copies(in_b);
  auto ins = Random16(copies, in_b), outs = Random16(copies, out_b);
  *bytes = static_cast<double>(in_b + out_b);
  return [=, &e](int i) {
    const int c = i % copies;
    const TensorView in = TensorView::Contiguous(ins[c], kDt, {rows, 2 * d});
    const TensorView out = TensorView::Contiguous(outs[c], kDt, {rows, d});
    Check(g == Gate::kSilu   ? SiluAndMul(e, in, out)
          : g == Gate::kGelu ? GeluAndMul(e, in, out)
                             : GeluTanhAndMul(e, in, out));
  };
}

// RoPE with pos_ids (out of place or in place), Llama 3.1, or the cos/sin cache.
enum class RopeForm { kPosIds, kPosIdsInplace, kLlama31, kCache };

std::function<void(int)> Rope(Engine& e, RopeForm form, int64_t nnz, int64_t hq, int64_t hk,
                              int64_t dim, double* bytes) {
  const size_t qb = nnz * hq * dim * 2, kb = nnz * hk * dim * 2;
  const int copies = Copies(2 * (qb + kb));
  auto qs = Random16(copies, qb), ks = Random16(copies, kb);
  auto qo = Random16(copies, qb), ko = Random16(copies, kb);
  std::vector<int32_t> pos(nnz);
  std::mt19937 rng(3);
  for (int32_t& p : pos) p = static_cast<int32_t>(rng() % 8192);
  void* dpos = UploadI32(pos);
  constexpr int64_t kMaxPos = 8192;
  void* cache = bench::DeviceAlloc(kMaxPos * dim * 4);
  if (!bench::DryRun()) {
    std::vector<float> cs(kMaxPos * dim);
    for (int64_t p = 0; p < kMaxPos; ++p)
      for (int64_t f = 0; f < dim / 2; ++f) {
        const double a = p * std::pow(1e4, -2.0 * f / dim);
        cs[p * dim + f] = static_cast<float>(std::cos(a));
        cs[p * dim + dim / 2 + f] = static_cast<float>(std::sin(a));
      }
    (*runtime::Driver())
        ->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(cache), cs.data(), cs.size() * 4);
  }
  *bytes = 2.0 * (qb + kb) + nnz * 4.0;
  return [=, &e](int i) {
    const int c = i % copies;
    const TensorView q = TensorView::Contiguous(qs[c], kDt, {nnz, hq, dim});
    const TensorView k = TensorView::Contiguous(ks[c], kDt, {nnz, hk, dim});
    const TensorView q2 = TensorView::Contiguous(qo[c], kDt, {nnz, hq, dim});
    const TensorView k2 = TensorView::Contiguous(ko[c], kDt, {nnz, hk, dim});
    const TensorView p = I32(dpos, nnz);
    switch (form) {
      case RopeForm::kPosIds:
        return Check(ApplyRopePosIds(e, q, k, q2, k2, p));
      case RopeForm::kPosIdsInplace:
        return Check(ApplyRopePosIdsInplace(e, q, k, p));
      case RopeForm::kLlama31:
        return Check(ApplyLlama31RopePosIds(e, q, k, q2, k2, p));
      case RopeForm::kCache:
        return Check(
            ApplyRopeWithCosSinCache(e, p, TensorView::Contiguous(qs[c], kDt, {nnz, hq * dim}),
                                     TensorView::Contiguous(ks[c], kDt, {nnz, hk * dim}),
                                     TensorView::Contiguous(qo[c], kDt, {nnz, hq * dim}),
                                     TensorView::Contiguous(ko[c], kDt, {nnz, hk * dim}), dim,
                                     TensorView::Contiguous(cache, DType::kF32, {kMaxPos, dim})));
    }
  };
}

// Append of nnz tokens (nnz / batch per request after 100 existing ones), NHD combined cache.
struct Append {
  TensorView bi, pos, cache, ind, ptr, last;
  std::vector<void*> ks, vs;
  int copies = 1;
  float scale = 1.f;
};
Append MakeAppend(int64_t nnz, int64_t batch, DType cache_dt, int64_t heads = 8, int64_t dim = 128,
                  int64_t page = 16) {
  const bench::AppendLayout l = bench::MakeAppendLayout(nnz, batch, page);
  const int64_t pages = l.pages;
  Append a;
  const size_t row_bytes = nnz * heads * dim * 2;
  a.copies = Copies(2 * row_bytes);
  a.ks = Random16(a.copies, row_bytes);
  a.vs = Random16(a.copies, row_bytes);
  const int cb = DTypeBytes(cache_dt);
  a.scale = cb == 1 ? 0.5f : 1.f;
  a.cache = TensorView::Contiguous(bench::DeviceAlloc(pages * 2 * page * heads * dim * cb),
                                   cache_dt, {pages, 2, page, heads, dim});
  a.bi = I32(UploadI32(l.batch_indices), nnz);
  a.pos = I32(UploadI32(l.positions), nnz);
  a.ind = I32(UploadI32(l.kv_indices), pages);
  a.ptr = I32(UploadI32(l.kv_indptr), batch + 1);
  a.last = I32(UploadI32(l.last_page_len), batch);
  return a;
}
Status RunAppend(Engine& e, const Append& a, const TensorView& k, const TensorView& v) {
  return AppendPagedKvCache(e, k, v, a.bi, a.pos, a.cache, a.ind, a.ptr, a.last, KvLayout::kNHD,
                            a.scale, a.scale);
}

std::function<void(int)> AppendOp(Engine& e, int64_t nnz, int64_t batch, DType cache_dt,
                                  double* bytes) {
  const Append a = MakeAppend(nnz, batch, cache_dt);
  *bytes = 2.0 * nnz * 8 * 128 * (2 + DTypeBytes(cache_dt)) + nnz * 8.0;
  return [=, &e](int i) {
    const int c = i % a.copies;
    Check(RunAppend(e, a, TensorView::Contiguous(a.ks[c], kDt, {nnz, 8, 128}),
                    TensorView::Contiguous(a.vs[c], kDt, {nnz, 8, 128})));
  };
}

std::function<void(int)> Positions(Engine& e, int64_t batch, int64_t per, double* bytes) {
  std::vector<int32_t> indptr{0}, seq;
  for (int64_t b = 0; b < batch; ++b) {
    indptr.push_back(static_cast<int32_t>(indptr.back() + per));
    seq.push_back(static_cast<int32_t>(100 + per));
  }
  const int64_t nnz = batch * per;
  const TensorView ip = I32(UploadI32(indptr), batch + 1), sl = I32(UploadI32(seq), batch);
  const TensorView bi = I32(bench::DeviceAlloc(nnz * 4), nnz);
  const TensorView pos = I32(bench::DeviceAlloc(nnz * 4), nnz);
  *bytes = nnz * 8.0 + batch * 8.0;
  return [=, &e](int) { Check(GetBatchIndicesPositions(e, ip, sl, bi, pos)); };
}

// One Llama-3.1-8B layer's layer ops at batch `b` (decode: one token per request):
// input_layernorm, RoPE in place on q/k, append k/v, post_attention fused_add_rmsnorm,
// silu_and_mul. Inputs rotate over copies like the single ops.
std::function<void(int)> Layer(Engine& e, int64_t b, double* bytes) {
  constexpr int64_t kH = 4096, kHq = 32, kHk = 8, kD = 128, kI = 14336;
  const int copies = 16;
  auto hs = Random16(copies, b * kH * 2), ys = Random16(copies, b * kH * 2);
  auto res = Random16(copies, b * kH * 2), qs = Random16(copies, b * kHq * kD * 2);
  auto gate = Random16(copies, b * 2 * kI * 2), act = Random16(copies, b * kI * 2);
  void* w = Random16(1, kH * 2)[0];
  std::vector<int32_t> pos(b, 1000);
  void* dpos = UploadI32(pos);
  const Append a = MakeAppend(b, b, kDt);
  *bytes = 0;
  return [=, &e](int i) {
    const int c = i % copies;
    const TensorView wv = TensorView::Contiguous(w, kDt, {kH});
    Check(RmsNorm(e, TensorView::Contiguous(hs[c], kDt, {b, kH}), wv,
                  TensorView::Contiguous(ys[c], kDt, {b, kH})));
    const TensorView q = TensorView::Contiguous(qs[c], kDt, {b, kHq, kD});
    const TensorView k = TensorView::Contiguous(a.ks[c % a.copies], kDt, {b, kHk, kD});
    const TensorView v = TensorView::Contiguous(a.vs[c % a.copies], kDt, {b, kHk, kD});
    Check(ApplyRopePosIdsInplace(e, q, k, I32(dpos, b)));
    Check(RunAppend(e, a, k, v));
    Check(FusedAddRmsNorm(e, TensorView::Contiguous(ys[c], kDt, {b, kH}),
                          TensorView::Contiguous(res[c], kDt, {b, kH}), wv));
    Check(SiluAndMul(e, TensorView::Contiguous(gate[c], kDt, {b, 2 * kI}),
                     TensorView::Contiguous(act[c], kDt, {b, kI})));
  };
}

}  // namespace

int main(int argc, char** argv) {
  Engine& e = bench::Setup(argc, argv);
  double bytes = 0;
  auto run = [&](const std::string& name, const std::string& shape,
                 const std::function<void(int)>& fn) { AB(name, shape, bytes, fn); };
  // Small: a decode step's layer ops (1-64 tokens).
  for (int64_t rows : {1, 64}) {
    auto f = Norm(e, NormOp::kRms, rows, 0, 4096, &bytes);
    run("rmsnorm", fmt::format("bf16 {}x4096", rows), f);
  }
  {
    auto f = Norm(e, NormOp::kFusedAdd, 64, 0, 4096, &bytes);
    run("fused_add_rmsnorm", "bf16 64x4096", f);
  }
  {
    auto f = Norm(e, NormOp::kRms, 64, 32, 128, &bytes);
    run("rmsnorm (QK-norm)", "bf16 64x32x128", f);
  }
  for (int64_t rows : {1, 64}) {
    auto f = Act(e, Gate::kSilu, rows, 14336, &bytes);
    run("silu_and_mul", fmt::format("bf16 {}x(2*14336)", rows), f);
  }
  for (int64_t nnz : {1, 64}) {
    auto f = Rope(e, RopeForm::kPosIdsInplace, nnz, 32, 8, 128, &bytes);
    run("rope pos_ids inplace", fmt::format("nnz {} 32/8 x 128", nnz), f);
  }
  {
    auto f = Rope(e, RopeForm::kCache, 64, 32, 8, 128, &bytes);
    run("rope cos_sin_cache", "nnz 64 32/8 x 128", f);
  }
  for (int64_t nnz : {1, 64}) {
    auto f = AppendOp(e, nnz, nnz, kDt, &bytes);
    run("append_paged_kv", fmt::format("bf16 nnz {} reqs {} h 8 d 128 page 16 NHD", nnz, nnz), f);
  }
  {
    auto f = Positions(e, 64, 1, &bytes);
    run("batch_indices_positions", "batch 64 x 1", f);
  }
  // Large: the family benches' shapes.
  {
    auto f = Norm(e, NormOp::kRms, 16384, 0, 4096, &bytes);
    run("rmsnorm", "bf16 16384x4096", f);
  }
  {
    auto f = Norm(e, NormOp::kRms, 8192, 0, 8192, &bytes);
    run("rmsnorm", "bf16 8192x8192", f);
  }
  {
    auto f = Norm(e, NormOp::kRms, 16384, 32, 128, &bytes);
    run("rmsnorm (QK-norm)", "bf16 16384x32x128", f);
  }
  {
    auto f = Norm(e, NormOp::kFusedAdd, 16384, 0, 4096, &bytes);
    run("fused_add_rmsnorm", "bf16 16384x4096", f);
  }
  {
    auto f = Norm(e, NormOp::kLayer, 8192, 0, 8192, &bytes);
    run("layernorm", "bf16 8192x8192", f);
  }
  {
    auto f = Act(e, Gate::kSilu, 16384, 14336, &bytes);
    run("silu_and_mul", "bf16 16384x(2*14336)", f);
  }
  {
    auto f = Act(e, Gate::kGeluTanh, 8192, 14336, &bytes);
    run("gelu_tanh_and_mul", "bf16 8192x(2*14336)", f);
  }
  for (RopeForm form : {RopeForm::kPosIds, RopeForm::kPosIdsInplace, RopeForm::kLlama31}) {
    const char* names[] = {"rope pos_ids", "rope pos_ids inplace", "rope llama31"};
    auto f = Rope(e, form, 16384, 32, 8, 128, &bytes);
    run(names[static_cast<int>(form)], "nnz 16384 32/8 x 128", f);
  }
  {
    auto f = AppendOp(e, 16384, 64, kDt, &bytes);
    run("append_paged_kv", "bf16 nnz 16384 reqs 64 h 8 d 128 page 16 NHD", f);
  }
  {
    auto f = AppendOp(e, 16384, 64, DType::kF8E4M3, &bytes);
    run("append_paged_kv", "e4m3 nnz 16384 reqs 64 h 8 d 128 page 16 NHD", f);
  }
  // The chain: 5 launches per call.
  for (int64_t b : {1, 32}) {
    auto f = Layer(e, b, &bytes);
    run("llama-3.1-8b layer ops (5 launches)", fmt::format("batch {}", b), f);
  }
  return 0;
}
