// Programmatic dependent launch (PDL) across the layer ops: chains where every op reads what the
// op before it wrote, launched back to back on one stream with PDL forced on (and once captured
// in a CUDA graph and replayed), against a double-precision host reference of the whole chain.
//
// The chain (bf16, T tokens in B requests, a fused QKV row of 32 + 8 + 8 heads x 128):
//   0. get_batch_indices_positions(append_indptr, seq_lens) -> batch_indices, positions
//   1. rmsnorm(x) -> y                                     [T, 6144]
//   2. RoPE in place on q = y[:, 0:4096], k = y[:, 4096:5120] at the positions of step 0
//   3. fused_add_rmsnorm in place: residual += q; q = rmsnorm(residual)
//   4. silu_and_mul(q as [T, 2 x 2048]) -> z
//   5. gemma_rmsnorm(z) -> z in place
//   6. append_paged_kv_cache(k, v = z[:, 0:1024]) at (batch_indices, positions) of step 0
//   7. get_batch_indices_positions(append_indptr, seq_lens - 1) -> the same batch_indices and
//      positions buffers (every position one lower)
//
// Why a missing wait fails here: with PDL the next kernel's CTAs are scheduled as soon as every
// CTA of the running kernel has passed its griddepcontrol.launch_dependents, which the layer ops
// run right after their griddepcontrol.wait, i.e. within a microsecond of their start, long
// before they store anything, provided the next kernel is already in the queue (a CUDA graph;
// on a stream, the gate kernel in RunStream holds the GPU while the host enqueues the chain). Steps
// 2-6 each read what the step right before them writes (the kernel a missing wait would overlap; an
// earlier step has completed by then, since the step in between waited for it): a kernel that read
// before its wait would read its input while the previous kernel is still writing it. Every
// intermediate buffer is poisoned before each run (NaN for the 16-bit ones), so such a read shows
// as non-finite values or a large error. Step 7 rewrites the indices step 6 reads: had it written
// before its wait, step 6 would place rows one position low (checked against the cache). The
// in-place steps 2, 3 and 5 likewise overwrite a buffer the step before reads. Steps 0 and 1 read
// only uploaded inputs: their waits run (they are launched with the attribute) but a missing one
// would not show here; both kernels' code paths are those of steps 7 and 5 (the rmsnorm template),
// which are covered.
#include <flashjit/activation.h>
#include <flashjit/norm.h>
#include <flashjit/page.h>
#include <flashjit/rope.h>
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "src/ops/common/pdl.h"
#include "src/runtime/driver.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/activation_ref.h"
#include "tests/reference/half.h"
#include "tests/reference/norm_ref.h"
#include "tests/reference/rope_ref.h"

namespace flashjit::test {
namespace {

constexpr DType kDt = DType::kBF16;
constexpr int64_t kHq = 32, kHk = 8, kD = 128, kRow = (kHq + 2 * kHk) * kD;  // 6144
constexpr int64_t kQ = kHq * kD, kF = kQ / 2;                                // 4096, 2048
constexpr int64_t kPage = 16;
constexpr float kEps = 1e-6f;

// Forces PDL on (or off) for every family while in scope.
struct ForcePdl {
  explicit ForcePdl(int mode) { ops::SetPdlForTesting(mode); }
  ~ForcePdl() { ops::SetPdlForTesting(-1); }
};

DeviceBuffer UploadI32(const std::vector<int32_t>& v) {
  DeviceBuffer b(v.size() * 4 + 4);
  b.Upload(v.data(), v.size() * 4);
  return b;
}
TensorView I32(const DeviceBuffer& b, int64_t n) {
  return TensorView::Contiguous(b.data(), DType::kI32, {n});
}
// A [T, cols] or [T, heads, kD] view of y's columns [col0, col0 + cols), rows kRow apart.
TensorView Cols(const DeviceBuffer& y, int64_t t, int64_t col0, int64_t cols, bool heads) {
  TensorView v;
  v.data = static_cast<char*>(y.data()) + col0 * 2;
  v.dtype = kDt;
  v.ndim = heads ? 3 : 2;
  v.shape[0] = t;
  v.strides[0] = kRow;
  if (heads) {
    v.shape[1] = cols / kD;
    v.strides[1] = kD;
    v.shape[2] = kD;
    v.strides[2] = 1;
  } else {
    v.shape[1] = cols;
    v.strides[1] = 1;
  }
  return v;
}
std::vector<double> Round(std::vector<double> v) {
  for (double& x : v) x = ref::Round16(kDt, static_cast<float>(x));
  return v;
}

struct Chain {
  int64_t batch = 0, t = 0, pages = 0;
  std::vector<int32_t> append_indptr{0}, seq_lens, kv_indptr{0}, last_page_len, kv_indices;
  DeviceBuffer dai, dsl, dsl1, dki, dkp, dlp;  // request tables (inputs)
  DeviceBuffer dx, dr, dw1, dw2, dw3;          // x, residual, weights (inputs)
  DeviceBuffer dbi, dpos, dy, dz, dcache;      // written by the chain
  std::vector<double> x, r, w1, w2, w3;        // what the device holds, as double
  std::vector<float> xf, rf, w1f, w2f, w3f;    // fresh random values of the current run

  Chain(int64_t b, int max_new, std::mt19937& rng) : batch(b) {
    std::uniform_int_distribution<int> old_len(1, 70), new_len(1, max_new);
    for (int64_t i = 0; i < b; ++i) {
      const int n = new_len(rng), old = old_len(rng);
      append_indptr.push_back(append_indptr.back() + n);
      seq_lens.push_back(old + n);
      const int p = static_cast<int>((old + n + kPage - 1) / kPage);
      kv_indptr.push_back(kv_indptr.back() + p);
      last_page_len.push_back(static_cast<int32_t>((old + n - 1) % kPage + 1));
    }
    t = append_indptr.back();
    pages = kv_indptr.back() + 2;
    kv_indices.resize(pages);
    for (int64_t i = 0; i < pages; ++i) kv_indices[i] = static_cast<int32_t>(i);
    std::shuffle(kv_indices.begin(), kv_indices.end(), rng);
    kv_indices.resize(kv_indptr.back());
    dai = UploadI32(append_indptr);
    dsl = UploadI32(seq_lens);
    std::vector<int32_t> lower = seq_lens;  // step 7: every position one lower (old >= 1)
    for (int32_t& l : lower) --l;
    dsl1 = UploadI32(lower);
    dki = UploadI32(kv_indices);
    dkp = UploadI32(kv_indptr);
    dlp = UploadI32(last_page_len);
    dbi = DeviceBuffer(t * 4 + 4);
    dpos = DeviceBuffer(t * 4 + 4);
    dy = DeviceBuffer(t * kRow * 2);
    dz = DeviceBuffer(t * kF * 2);
    dcache = DeviceBuffer(pages * 2 * kPage * kHk * kD * 2);
    Fresh(rng);
  }

  // New random inputs (uploaded) and poisoned intermediates; the previous run's results gone.
  void Fresh(std::mt19937& rng) {
    auto random = [&](int64_t n, float scale) {
      return n > (1 << 20) ? FastRandom(n, rng, scale) : RandomNormal(n, rng, scale);
    };
    xf = random(t * kRow, 2.f);
    rf = random(t * kQ, 1.f);
    w1f = RandomUniform(kRow, rng, 0.5f, 1.5f);
    w2f = RandomUniform(kQ, rng, 0.5f, 1.5f);
    w3f = RandomUniform(kF, rng, -0.5f, 0.5f);
    dx = Upload16(kDt, xf, &x);
    dr = Upload16(kDt, rf, &r);
    dw1 = Upload16(kDt, w1f, &w1);
    dw2 = Upload16(kDt, w2f, &w2);
    dw3 = Upload16(kDt, w3f, &w3);
    Poison();
  }
  // Intermediates to NaN / zero (see the file comment); the inputs x and residual re-uploaded
  // (the chain updates the residual in place).
  void Poison() {
    dbi.Fill(0);
    dpos.Fill(0);
    dy.Fill(0xFF);
    dz.Fill(0xFF);
    dcache.Fill(0xFF);
    std::vector<uint16_t> bits(rf.size());
    for (size_t i = 0; i < rf.size(); ++i) bits[i] = ref::FloatTo16(kDt, rf[i]);
    dr.Upload(bits.data(), bits.size() * 2);
    Synchronize();
  }

  // Enqueues steps 0-7 on `stream`, back to back.
  Status Enqueue(Engine& e, CUstream stream) {
    void* s = stream;
    const TensorView bi = I32(dbi, t), pos = I32(dpos, t);
    FLASHJIT_RETURN_IF_ERROR(
        GetBatchIndicesPositions(e, I32(dai, batch + 1), I32(dsl, batch), bi, pos, s));
    const TensorView x2 = TensorView::Contiguous(dx.data(), kDt, {t, kRow});
    const TensorView y2 = TensorView::Contiguous(dy.data(), kDt, {t, kRow});
    FLASHJIT_RETURN_IF_ERROR(
        RmsNorm(e, x2, TensorView::Contiguous(dw1.data(), kDt, {kRow}), y2, kEps, false, s));
    const TensorView q = Cols(dy, t, 0, kQ, true), k = Cols(dy, t, kQ, kHk * kD, true);
    FLASHJIT_RETURN_IF_ERROR(ApplyRopePosIdsInplace(e, q, k, pos, RopeOptions{}, s));
    const TensorView q2 = Cols(dy, t, 0, kQ, false);
    FLASHJIT_RETURN_IF_ERROR(FusedAddRmsNorm(e, q2, TensorView::Contiguous(dr.data(), kDt, {t, kQ}),
                                             TensorView::Contiguous(dw2.data(), kDt, {kQ}), kEps,
                                             false, s));
    const TensorView z = TensorView::Contiguous(dz.data(), kDt, {t, kF});
    FLASHJIT_RETURN_IF_ERROR(SiluAndMul(e, q2, z, s));
    FLASHJIT_RETURN_IF_ERROR(
        GemmaRmsNorm(e, z, TensorView::Contiguous(dw3.data(), kDt, {kF}), z, kEps, s));
    TensorView v;  // z[:, 0:1024] as [T, 8, 128]
    v.data = dz.data();
    v.dtype = kDt;
    v.ndim = 3;
    v.shape[0] = t;
    v.strides[0] = kF;
    v.shape[1] = kHk;
    v.strides[1] = kD;
    v.shape[2] = kD;
    v.strides[2] = 1;
    const TensorView cache = TensorView::Contiguous(dcache.data(), kDt, {pages, 2, kPage, kHk, kD});
    FLASHJIT_RETURN_IF_ERROR(
        AppendPagedKvCache(e, k, v, bi, pos, cache, I32(dki, int64_t(kv_indices.size())),
                           I32(dkp, batch + 1), I32(dlp, batch), KvLayout::kNHD, 1.f, 1.f, s));
    return GetBatchIndicesPositions(e, I32(dai, batch + 1), I32(dsl1, batch), bi, pos, s);
  }

  // The whole chain in double precision, rounded to bf16 where the device stores, and the
  // device's results against it.
  void Check(const std::string& what) {
    std::vector<double> y = Round(ref::RmsNorm(x, w1, t, kRow, kEps, false));
    const std::vector<double> freqs = ref::RopeFreqs(kD, 1.0, 1e4);
    std::vector<int32_t> pos(t), bi(t);
    for (int64_t b = 0; b < batch; ++b)
      for (int32_t j = append_indptr[b]; j < append_indptr[b + 1]; ++j) {
        bi[j] = static_cast<int32_t>(b);
        pos[j] = seq_lens[b] - (append_indptr[b + 1] - append_indptr[b]) + (j - append_indptr[b]);
      }
    for (int64_t i = 0; i < t; ++i) {
      std::vector<double> c(kD / 2), s(kD / 2);
      for (int64_t f = 0; f < kD / 2; ++f) {
        c[f] = std::cos(pos[i] * freqs[f]);
        s[f] = std::sin(pos[i] * freqs[f]);
      }
      for (int64_t h = 0; h < kHq + kHk; ++h) {
        double* head = &y[i * kRow + h * kD];
        std::vector<double> rot =
            Round(ref::RotateHead(std::vector<double>(head, head + kD), c, s, kD, false));
        std::copy(rot.begin(), rot.end(), head);
      }
    }
    // fused_add_rmsnorm in place on q and the residual; silu_and_mul; gemma rmsnorm in place.
    std::vector<double> res(t * kQ), q(t * kQ);
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < kQ; ++c)
        res[i * kQ + c] = ref::Round16(kDt, static_cast<float>(y[i * kRow + c] + r[i * kQ + c]));
    q = Round(ref::RmsNorm(res, w2, t, kQ, kEps, false));
    for (int64_t i = 0; i < t; ++i)
      std::copy(q.begin() + i * kQ, q.begin() + (i + 1) * kQ, y.begin() + i * kRow);
    std::vector<double> z = Round(ref::GatedActivation(q, t, kF, ref::Gate::kSilu));
    z = Round(ref::RmsNorm(z, w3, t, kF, kEps, true));
    // The cache rows the append wrote: K (rotated) and V (z's first 1024 columns) of every token
    // at its page and slot (step 0's positions).
    std::vector<double> want_cache;
    std::vector<float> got_cache;
    std::vector<uint16_t> cache_bits(dcache.bytes() / 2);
    dcache.Download(cache_bits.data(), dcache.bytes());
    for (int64_t i = 0; i < t; ++i) {
      const int32_t page = kv_indices[kv_indptr[bi[i]] + pos[i] / kPage];
      const int64_t slot = pos[i] % kPage;
      for (int kv = 0; kv < 2; ++kv)
        for (int64_t e = 0; e < kHk * kD; ++e) {
          want_cache.push_back(kv ? z[i * kF + e] : y[i * kRow + kQ + e]);
          got_cache.push_back(
              ref::From16(kDt, cache_bits[((page * 2 + kv) * kPage + slot) * kHk * kD + e]));
        }
    }
    for (int32_t& p : pos) --p;  // step 7's positions

    std::vector<int32_t> got_bi(t), got_pos(t);
    dbi.Download(got_bi.data(), t * 4);
    dpos.Download(got_pos.data(), t * 4);
    INFO(what);
    CHECK(got_bi == bi);
    CHECK(got_pos == pos);
    auto expect = [&](const char* name, const std::vector<float>& got,
                      const std::vector<double>& want) {
      const ErrorStats e = Compare(got, want);
      INFO(name << ": " << e.ToString());
      CHECK(e.non_finite == 0);
      CHECK(e.rel_l2 < 1e-2);
    };
    expect("y (q normed, k rotated, v)", Download16(kDt, dy, t * kRow), y);
    expect("residual", Download16(kDt, dr, t * kQ), res);
    expect("z", Download16(kDt, dz, t * kF), z);
    expect("paged cache rows", got_cache, want_cache);
  }
};

// Runs the chain `runs` times with fresh data on one non-blocking stream, PDL forced on.
void RunStream(int64_t batch, int max_new, int runs) {
  ForcePdl pdl(1);
  std::mt19937 rng(Seed());
  Engine& e = TestEngine();
  Chain c(batch, max_new, rng);
  // The gate: an rmsnorm over 16384 x 8192 (2 x 256 MiB, ~140 us on an H200) enqueued first, so
  // that the host has enqueued the whole chain before the GPU reaches it and the chain's kernels
  // run back to back from the queue, as in a CUDA graph or a server's busy stream. Without it the
  // host's enqueue of each op (several us) is slower than these kernels: each one ended before
  // the next was launched, and the chain with RoPE's wait deleted passed (session 9, call 2).
  constexpr int64_t kGateRows = 16384, kGateCols = 8192;
  DeviceBuffer gate_in(kGateRows * kGateCols * 2), gate_out(kGateRows * kGateCols * 2);
  DeviceBuffer gate_w(kGateCols * 2);
  auto gate = [&](CUstream stream) {
    return RmsNorm(e, TensorView::Contiguous(gate_in.data(), kDt, {kGateRows, kGateCols}),
                   TensorView::Contiguous(gate_w.data(), kDt, {kGateCols}),
                   TensorView::Contiguous(gate_out.data(), kDt, {kGateRows, kGateCols}), kEps,
                   false, stream);
  };
  if (DryRun()) {
    REQUIRE(gate(nullptr).ok());
    REQUIRE(c.Enqueue(e, nullptr).ok());
    return;
  }
  gate_in.Fill(0x3f);  // finite bf16 (0x3f3f ~ 0.75)
  gate_w.Fill(0x3f);
  Synchronize();
  const runtime::DriverApi& api = **runtime::Driver();
  CUstream stream;
  REQUIRE(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  for (int run = 0; run < runs; ++run) {
    if (run) c.Fresh(rng);
    Status s = gate(stream);
    if (s.ok()) s = c.Enqueue(e, stream);
    INFO(s.ToString());
    REQUIRE(s.ok());
    REQUIRE(api.cuStreamSynchronize(stream) == CUDA_SUCCESS);
    c.Check(fmt::format("B {} T {} run {}", batch, c.t, run));
  }
  api.cuStreamDestroy(stream);
}

TEST_CASE("pdl: small layer-op chain back to back", "[pdl][norm][rope][page][activation]") {
  RunStream(3, 4, 3);  // 3-12 tokens: every kernel one short wave
}

TEST_CASE("pdl: large layer-op chain back to back", "[pdl][norm][rope][page][activation]") {
  RunStream(24, 96, 2);  // ~1.2k tokens: multi-wave grids
}

TEST_CASE("pdl: layer-op chain captured in a CUDA graph and replayed",
          "[pdl][norm][rope][page][activation]") {
  ForcePdl pdl(1);
  std::mt19937 rng(Seed());
  Engine& e = TestEngine();
  Chain c(5, 9, rng);
  REQUIRE(c.Enqueue(e, nullptr).ok());  // warm-up outside the capture (builds the kernels)
  if (DryRun()) return;
  Synchronize();
  CapturedGraph graph;
  const Status captured = graph.Capture([&](CUstream s) { return c.Enqueue(e, s); });
  INFO(captured.ToString());
  REQUIRE(captured.ok());
  for (int run = 0; run < 3; ++run) {
    // New values in the same buffers (the graph holds their addresses), intermediates poisoned.
    std::vector<float> xf = FastRandom(c.t * kRow, rng, 3.f), rf = FastRandom(c.t * kQ, rng, 1.f);
    std::vector<uint16_t> xb(xf.size()), rb(rf.size());
    for (size_t i = 0; i < xf.size(); ++i) {
      xb[i] = ref::FloatTo16(kDt, xf[i]);
      c.x[i] = ref::From16(kDt, xb[i]);
    }
    for (size_t i = 0; i < rf.size(); ++i) {
      rb[i] = ref::FloatTo16(kDt, rf[i]);
      c.r[i] = ref::From16(kDt, rb[i]);
    }
    c.rf = rf;
    c.dx.Upload(xb.data(), xb.size() * 2);
    c.Poison();
    graph.Replay();
    c.Check(fmt::format("graph replay {}", run));
  }
}

}  // namespace
}  // namespace flashjit::test
