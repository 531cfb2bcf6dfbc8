// Normalization bandwidth. Bytes that must move: read x (+ residual), write out (+ residual),
// weights once. Inputs rotate over enough copies to exceed the 60 MB L2.
//   flashjit_bench_norm [--dry-run] [--sweep]   (--sweep also times alternative variants)
#include <flashjit/norm.h>
#include <fmt/format.h>

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
    // Alternative variants for the large shapes: threads per row x items x streaming hints.
    struct Knobs {
      int threads, items, streaming;
    };
    for (Knobs k : {Knobs{128, 8, 1}, Knobs{256, 4, 1}, Knobs{256, 4, 0}, Knobs{512, 2, 1},
                    Knobs{512, 2, 0}, Knobs{1024, 1, 1}, Knobs{1024, 1, 0}}) {
      ops::NormSpec s;
      s.threads = static_cast<uint16_t>(k.threads);
      s.items = static_cast<uint8_t>(k.items);
      s.streaming = static_cast<uint8_t>(k.streaming);
      const std::string note = fmt::format("sweep t{} i{} cs{}", k.threads, k.items, k.streaming);
      Bench(engine, K::kRms, 8192, 0, 8192, &s, note);
      Bench(engine, K::kFusedAdd, 8192, 0, 8192, &s, note);
      if (k.threads <= 512) {
        ops::NormSpec h = s;
        h.threads = static_cast<uint16_t>(k.threads / 2);
        Bench(engine, K::kRms, 16384, 0, 4096, &h,
              fmt::format("sweep t{} i{} cs{}", h.threads, h.items, h.streaming));
      }
    }
  }
  return 0;
}
