// Normalization bandwidth. Bytes that must move: read x (+ residual), write out (+ residual),
// weights once. Inputs rotate over enough copies to exceed the 60 MB L2.
//   flashjit_bench_norm [--dry-run] [--sweep]   (--sweep also times alternative variants)
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "src/ops/norm/norm_run.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;

namespace {

const DType kDt = DType::kBF16;

int Copies(size_t bytes) {
  return bytes >= (64u << 20) ? 1 : std::min<int>(64, static_cast<int>((160u << 20) / bytes + 1));
}

std::vector<void*> Buffers(int n, size_t bytes) {
  std::vector<void*> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(bench::DeviceAlloc(bytes));
    bench::DeviceFillRandom16(v.back(), bytes / 2, 1.f);
  }
  return v;
}

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

// kind: rms, fused_add, layer; shape [rows, heads, dim] (heads = 0: 2-D [rows, dim]).
void Bench(Engine& engine, ops::NormKind kind, int64_t rows, int64_t heads, int64_t dim,
           const ops::NormSpec* force = nullptr, const std::string& note = "") {
  const int64_t n = rows * (heads ? heads : 1) * dim;
  const size_t bytes = n * 2;
  const bool fused = kind == ops::NormKind::kFusedAdd, layer = kind == ops::NormKind::kLayer;
  const int copies = Copies(bytes * (fused ? 2 : 1));
  std::vector<void*> xs = Buffers(copies, bytes), outs = Buffers(copies, bytes);
  const DType wdt = layer ? DType::kF32 : kDt;
  void* w = bench::DeviceAlloc(dim * 4);
  void* b = bench::DeviceAlloc(dim * 4);
  bench::DeviceFillRandom16(w, dim, 1.f);  // any finite bits will do for timing
  bench::DeviceFillRandom16(b, dim, 1.f);
  auto view = [&](void* p) {
    return heads ? TensorView::Contiguous(p, kDt, {rows, heads, dim})
                 : TensorView::Contiguous(p, kDt, {rows, dim});
  };
  double us = bench::MedianMicros([&](int i) {
    const int c = i % copies;
    ops::NormArgs a;
    a.kind = kind;
    a.input = view(xs[c]);
    a.out = view(outs[c]);
    a.residual = view(outs[c]);
    a.weight = TensorView::Contiguous(w, wdt, {dim});
    a.bias = TensorView::Contiguous(b, wdt, {dim});
    Check(ops::RunNorm(engine, a, nullptr, force));
  });
  const char* name = fused ? "fused_add_rmsnorm" : (layer ? "layernorm" : "rmsnorm");
  const std::string shape =
      heads ? fmt::format("bf16 {}x{}x{}", rows, heads, dim) : fmt::format("bf16 {}x{}", rows, dim);
  const double moved = (fused ? 4.0 : 2.0) * bytes + dim * (layer ? 8 : 2);
  bench::Report(name, shape, us, moved, 0, note);
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  bool sweep = bench::DryRun();
  for (int i = 1; i < argc; ++i) sweep |= !std::strcmp(argv[i], "--sweep");
  using K = ops::NormKind;
  for (int64_t rows : {1, 64, 2048, 16384}) Bench(engine, K::kRms, rows, 0, 4096);
  Bench(engine, K::kRms, 8192, 0, 8192);
  Bench(engine, K::kRms, 4096, 0, 16384);
  Bench(engine, K::kRms, 64, 32, 128);     // QK-norm
  Bench(engine, K::kRms, 16384, 32, 128);  // QK-norm
  for (int64_t rows : {1, 64, 16384}) Bench(engine, K::kFusedAdd, rows, 0, 4096);
  Bench(engine, K::kFusedAdd, 8192, 0, 8192);
  for (int64_t rows : {64, 8192}) Bench(engine, K::kLayer, rows, 0, 8192);
  if (sweep) {
    // Alternative variants for the large shapes: threads per row x items (16-byte accesses),
    // with and without prefetching the next row over a resident grid.
    for (int pf : {0, 1}) {
      for (auto [t, i] : std::vector<std::array<int, 2>>{{128, 8}, {256, 4}, {512, 2}, {1024, 1}}) {
        auto knob = [pf](int threads, int items) {
          ops::NormSpec s;
          s.threads = static_cast<uint16_t>(threads);
          s.items = static_cast<uint8_t>(items);
          s.prefetch = static_cast<uint8_t>(pf);
          return s;
        };
        auto note = [](const ops::NormSpec& s) {
          return fmt::format("sweep t{} i{} pf{}", s.threads, s.items, s.prefetch);
        };
        const ops::NormSpec s = knob(t, i), half = knob(t / 2, i);
        const ops::NormSpec twice = t < 1024 ? knob(t * 2, i) : knob(t, i * 2);
        Bench(engine, K::kRms, 8192, 0, 8192, &s, note(s));
        Bench(engine, K::kFusedAdd, 8192, 0, 8192, &s, note(s));
        Bench(engine, K::kLayer, 8192, 0, 8192, &s, note(s));
        Bench(engine, K::kRms, 16384, 0, 4096, &half, note(half));
        Bench(engine, K::kFusedAdd, 16384, 0, 4096, &half, note(half));
        Bench(engine, K::kRms, 4096, 0, 16384, &twice, note(twice));
      }
    }
  }
  return 0;
}
