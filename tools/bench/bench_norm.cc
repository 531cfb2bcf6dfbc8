// RMSNorm bandwidth: bytes that must move = read x + write out (+ weight, once).
#include <flashjit/norm.h>
#include <fmt/format.h>

#include <stdexcept>

#include "tools/bench/bench_util.h"

using namespace flashjit;

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  const DType dt = DType::kBF16;
  struct Shape {
    int64_t rows, hidden;
  };
  for (Shape s : {Shape{1, 4096}, Shape{64, 4096}, Shape{2048, 4096}, Shape{8192, 8192},
                  Shape{16384, 4096}, Shape{4096, 16384}}) {
    // Rotate over enough copies to exceed the 60 MB L2.
    const size_t bytes = s.rows * s.hidden * 2;
    const int copies = bytes >= (64u << 20) ? 1 : static_cast<int>((128u << 20) / bytes + 1);
    std::vector<void*> xs, outs;
    for (int c = 0; c < std::min(copies, 64); ++c) {
      xs.push_back(bench::DeviceAlloc(bytes));
      outs.push_back(bench::DeviceAlloc(bytes));
      bench::DeviceFillRandom16(xs.back(), s.rows * s.hidden, 1.f);
    }
    void* w = bench::DeviceAlloc(s.hidden * 2);
    bench::DeviceFillRandom16(w, s.hidden, 1.f);
    double us = bench::MedianMicros([&](int i) {
      int c = i % static_cast<int>(xs.size());
      Status st = RmsNorm(engine, TensorView::Contiguous(xs[c], dt, {s.rows, s.hidden}),
                          TensorView::Contiguous(w, dt, {s.hidden}),
                          TensorView::Contiguous(outs[c], dt, {s.rows, s.hidden}), 1e-6f);
      if (!st.ok()) throw std::runtime_error(st.ToString());
    });
    bench::Report("rmsnorm", fmt::format("bf16 {}x{}", s.rows, s.hidden), us,
                  2.0 * bytes + s.hidden * 2);
  }
  return 0;
}
