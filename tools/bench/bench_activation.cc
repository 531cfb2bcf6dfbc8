// Gated activation bandwidth. Bytes that must move: read [rows, 2d], write [rows, d].
#include <flashjit/activation.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/bench/bench_util.h"
#include "tools/bench/model_shapes.h"

using namespace flashjit;

namespace {

enum class Act { kSilu, kGelu, kGeluTanh };

// Times one call over input copies: in(c) / out(c) are copy c's buffers, `tag` leads the note.
template <class In, class Out>
void Time(Engine& engine, Act act, int64_t rows, int64_t d, int copies, const In& in_buf,
          const Out& out_buf, const std::string& tag) {
  const DType dt = DType::kBF16;
  const size_t in_bytes = rows * 2 * d * 2, out_bytes = rows * d * 2;
  const char* names[] = {"silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul"};
  const bench::Timings t = bench::TimeCall([&](int i) {
    const int c = i % copies;
    TensorView in = TensorView::Contiguous(in_buf(c), dt, {rows, 2 * d});
    TensorView out = TensorView::Contiguous(out_buf(c), dt, {rows, d});
    Status s = act == Act::kSilu   ? SiluAndMul(engine, in, out)
               : act == Act::kGelu ? GeluAndMul(engine, in, out)
                                   : GeluTanhAndMul(engine, in, out);
    if (!s.ok()) throw std::runtime_error(s.ToString());
  });
  const double moved = static_cast<double>(in_bytes + out_bytes);
  bench::Report(names[static_cast<int>(act)], fmt::format("bf16 {}x(2*{})", rows, d), t.alone,
                moved, 0, tag + bench::TimingsNote(t, moved));
}

void Bench(Engine& engine, Act act, int64_t rows, int64_t d) {
  const size_t in_bytes = rows * 2 * d * 2, out_bytes = rows * d * 2;
  const int copies = in_bytes >= (64u << 20)
                         ? 1
                         : std::min<int>(64, static_cast<int>((160u << 20) / in_bytes + 1));
  std::vector<void*> ins, outs;
  for (int c = 0; c < copies; ++c) {
    ins.push_back(bench::DeviceAlloc(in_bytes));
    outs.push_back(bench::DeviceAlloc(out_bytes));
    bench::DeviceFillRandom16(ins.back(), in_bytes / 2, 1.f);
  }
  Time(
      engine, act, rows, d, copies, [&](int c) { return ins[c]; }, [&](int c) { return outs[c]; },
      "");
}

// --models: the same call on pooled buffers (hundreds of shapes), name tagged "model".
void BenchModel(Engine& engine, Act act, int64_t rows, int64_t d) {
  const size_t in_bytes = rows * 2 * d * 2, out_bytes = rows * d * 2;
  const int copies = bench::ModelCopies(in_bytes);
  for (int c = 0; c < copies; ++c)
    bench::ModelBuffer(0, c, in_bytes), bench::ModelBuffer(1, c, out_bytes);
  Time(
      engine, act, rows, d, copies, [&](int c) { return bench::ModelBuffer(0, c, in_bytes); },
      [&](int c) { return bench::ModelBuffer(1, c, out_bytes); }, "model");
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  int64_t max_tokens = int64_t{1} << 40;  // --max-tokens N: only the model rows up to N tokens
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--max-tokens")) max_tokens = std::atoll(argv[i + 1]);
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--models")) {
      for (int64_t rows : bench::ModelTokens())
        if (rows <= max_tokens)
          for (int64_t d : bench::ModelActDims())
            for (Act a : {Act::kSilu, Act::kGeluTanh}) BenchModel(engine, a, rows, d);
      return 0;
    }
  for (int64_t rows : {1, 64, 8192, 16384}) Bench(engine, Act::kSilu, rows, 14336);
  Bench(engine, Act::kGelu, 16384, 14336);
  Bench(engine, Act::kGeluTanh, 16384, 14336);
  Bench(engine, Act::kSilu, 16384, 4096);
  return 0;
}
