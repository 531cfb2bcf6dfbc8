// Attention-state merge bandwidth. Bytes that must move: every state's v [seq, heads, d] and s
// [seq, heads] read once, the merged v and s written once. Inputs rotate over enough copies to
// exceed the 60 MB L2; synced (one call between two events) and back to back.
#include <flashjit/cascade.h>
#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "tools/bench/bench_util.h"

using namespace flashjit;

namespace {

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

// n states of [seq, heads, d] bf16 merged: n = 2 through merge_state (separate tensors),
// otherwise merge_states over one stacked [seq, n, heads, d] tensor.
void Bench(Engine& engine, int64_t seq, int n, int64_t heads, int64_t d) {
  const DType dt = DType::kBF16;
  const size_t v_bytes = seq * heads * d * 2, s_bytes = seq * heads * 4;
  const size_t in_bytes = n * (v_bytes + s_bytes), moved = in_bytes + v_bytes + s_bytes;
  const int copies = in_bytes >= (64u << 20)
                         ? 1
                         : std::min<int>(64, static_cast<int>((160u << 20) / in_bytes + 1));
  struct Set {
    void *v, *s, *vo, *so;
  };
  std::vector<Set> sets;
  for (int c = 0; c < copies; ++c) {
    Set set{bench::DeviceAlloc(n * v_bytes), bench::DeviceAlloc(n * s_bytes),
            bench::DeviceAlloc(v_bytes), bench::DeviceAlloc(s_bytes)};
    bench::DeviceFillRandom16(set.v, n * v_bytes / 2, 1.f);
    bench::DeviceFillRandom16(set.s, n * s_bytes / 2, 1.f);  // finite f32 bit patterns too
    sets.push_back(set);
  }
  auto run = [&](int i) {
    const Set& set = sets[i % copies];
    const TensorView vo = TensorView::Contiguous(set.vo, dt, {seq, heads, d});
    const TensorView so = TensorView::Contiguous(set.so, DType::kF32, {seq, heads});
    if (n == 2) {
      auto v = [&](int k) {
        return TensorView::Contiguous(static_cast<char*>(set.v) + k * v_bytes, dt, {seq, heads, d});
      };
      auto s = [&](int k) {
        return TensorView::Contiguous(static_cast<char*>(set.s) + k * s_bytes, DType::kF32,
                                      {seq, heads});
      };
      Check(MergeState(engine, v(0), s(0), v(1), s(1), vo, so));
    } else {
      Check(MergeStates(engine, TensorView::Contiguous(set.v, dt, {seq, n, heads, d}),
                        TensorView::Contiguous(set.s, DType::kF32, {seq, n, heads}), vo, so));
    }
  };
  const bench::Timings t = bench::TimeCall(run);
  bench::Report(n == 2 ? "merge_state" : "merge_states",
                fmt::format("bf16 seq {} states {} heads {} d {}", seq, n, heads, d), t.alone,
                static_cast<double>(moved), 0, bench::TimingsNote(t, moved));
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  for (int64_t seq : {1, 64, 2048, 16384}) Bench(engine, seq, 2, 32, 128);
  Bench(engine, 16384, 2, 32, 256);
  for (int n : {4, 16}) Bench(engine, 2048, n, 32, 128);
  Bench(engine, 64, 16, 32, 128);
  // The ceiling of ordinary loads and stores: the driver's copy of merge_state seq 16384's bytes
  // (2 x 134.2 MB of v read, 134.2 MB written; the log-sum-exps are 1.5 % of the bytes).
  if (!bench::DryRun() && !bench::Once()) {
    const size_t half = size_t{3} * 16384 * 32 * 128 * 2 / 2;
    bench::ReportDeviceCopy(bench::DeviceAlloc(half), bench::DeviceAlloc(half), half,
                            "merge_state seq 16384's v bytes (402.7 MB moved)");
  }
  return 0;
}
