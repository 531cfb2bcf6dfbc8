// Batch decode bandwidth over a paged KV cache: bytes that must move = K + V read.
// bf16 (and fp8 KV), 32 query / 8 kv heads, head_dim 128, page 16, random page order.
// Inputs rotate over several page tables when one shape's KV is smaller than the L2 many times.
#include <flashjit/decode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "src/ops/decode/decode_spec.h"
#include "src/runtime/driver.h"
#include "tools/bench/bench_util.h"

using namespace flashjit;

namespace {

void Check(const Status& s) {
  if (!s.ok()) throw std::runtime_error(s.ToString());
}

void Upload(void* dst, const void* src, size_t bytes) {
  if (bench::DryRun()) return;
  auto d = runtime::Driver();
  Check(d.status());
  const CUresult rc = (*d)->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes);
  if (rc != CUDA_SUCCESS) Check(runtime::CudaStatus(rc, "cuMemcpyHtoD"));
}

struct Shape {
  int b, len;
  DType kv;
};

// The shape's name for --shapes.
std::string ShapeKey(const Shape& s) {
  return fmt::format("{}{}x{}", s.kv == DType::kBF16 ? "" : "e4m3:", s.b, s.len);
}

// --shapes LIST: only these shapes, comma-separated: BxL (bf16), e4m3:BxL, sL (single decode).
// --once (bench_util): one call of each shape, no timing (for a profiler).
// --persistent 0|1|auto: sets FLASHJIT_DECODE_PERSISTENT for this process (A/B of the persistent
// grid: 0 = one CTA per (item, head tile), 1 = every plan that does not cluster, auto = default).
struct Options {
  std::vector<std::string> shapes;
  bool Wants(const std::string& key) const {
    return shapes.empty() || std::find(shapes.begin(), shapes.end(), key) != shapes.end();
  }
};

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--persistent") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (v == "auto")
        unsetenv("FLASHJIT_DECODE_PERSISTENT");
      else
        setenv("FLASHJIT_DECODE_PERSISTENT", v.c_str(), 1);
    }
    if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t pos = 0; pos <= list.size();) {
        const size_t end = std::min(list.find(',', pos), list.size());
        if (end > pos) o.shapes.push_back(list.substr(pos, end - pos));
        pos = end + 1;
      }
    }
  }
  return o;
}

// Synced, queued and back-to-back figures of 30 calls (zeros with --once).
bench::Timings Time(const std::function<void(int)>& run) { return bench::TimeCall(run, 30, 5); }

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  const Options opt = ParseOptions(argc, argv);
  const int hq = 32, hkv = 8, d = 128, ps = 16;
  const int64_t page_elems = int64_t(ps) * hkv * d;
  std::vector<Shape> shapes;
  for (int b : {1, 16, 64, 256})
    for (int len : {1024, 4096, 16384, 32768}) shapes.push_back({b, len, DType::kBF16});
  for (auto [b, len] : {std::pair{16, 4096}, {64, 4096}, {64, 32768}, {256, 1024}})
    shapes.push_back({b, len, DType::kF8E4M3});

  // The pool holds the largest selected shape, and at least 2 GB (the rotation over copies and
  // the single-request rows need 1 GB).
  int64_t max_tokens = 1LL << 19;
  for (const Shape& s : shapes)
    if (opt.Wants(ShapeKey(s))) max_tokens = std::max<int64_t>(max_tokens, int64_t(s.b) * s.len);
  const int64_t pool_pages = bench::DryRun() ? 64 : max_tokens / ps + 64;
  // One pool of pages for every shape, K and V per page ([pages, 2, ps, Hkv, D]).
  void* pool = bench::DeviceAlloc(size_t(pool_pages) * 2 * page_elems * 2);
  bench::DeviceFillRandom16(pool, size_t(pool_pages) * 2 * page_elems, 1.f);
  void* ws = nullptr;
  size_t ws_bytes = 0;
  std::mt19937 rng(7);

  for (const Shape& s : shapes) {
    if (!opt.Wants(ShapeKey(s))) continue;
    const int64_t pages_per = (s.len + ps - 1) / ps, pages = pages_per * s.b;
    const int64_t kv_bytes = int64_t(s.b) * s.len * hkv * d * 2 * DTypeBytes(s.kv);
    // Enough page tables to rotate over ~1 GB of KV (the L2 is 60 MB).
    const int copies =
        bench::DryRun() ? 1 : int(std::clamp<int64_t>((1LL << 30) / kv_bytes, 1, 16));
    const int64_t usable = std::min<int64_t>(pool_pages * (DTypeBytes(s.kv) == 1 ? 2 : 1),
                                             bench::DryRun() ? pages : INT64_MAX);
    std::vector<int32_t> indptr(s.b + 1), last(s.b, s.len - (pages_per - 1) * ps);
    for (int r = 0; r <= s.b; ++r) indptr[r] = int32_t(r * pages_per);
    std::vector<void*> tables, qs, outs;
    std::vector<int32_t> perm(usable);
    for (int c = 0; c < copies; ++c) {
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);  // random page order, distinct per copy
      tables.push_back(bench::DeviceAlloc(pages * 4));
      Upload(tables.back(), perm.data(), pages * 4);
      qs.push_back(bench::DeviceAlloc(size_t(s.b) * hq * d * 2));
      bench::DeviceFillRandom16(qs.back(), size_t(s.b) * hq * d, 1.f);
      outs.push_back(bench::DeviceAlloc(size_t(s.b) * hq * d * 2));
    }
    BatchDecodeConfig cfg;
    cfg.num_qo_heads = hq;
    cfg.num_kv_heads = hkv;
    cfg.head_dim = d;
    cfg.page_size = ps;
    cfg.kv_dtype = s.kv;
    cfg.max_batch_size = s.b;
    auto w = BatchDecode::Create(engine, cfg);
    Check(w.status());
    if ((*w)->WorkspaceBytes() > ws_bytes) {
      ws_bytes = (*w)->WorkspaceBytes() * 2;
      ws = bench::DeviceAlloc(ws_bytes);
    }
    Check((*w)->Plan(indptr.data(), last.data(), s.b, {}, ws, ws_bytes));
    // fp8 pages are half the size: the same pool holds twice as many.
    const int64_t page_bytes_kv = page_elems * DTypeBytes(s.kv);
    const int64_t n_pages = pool_pages * 2 * page_elems * 2 / (2 * page_bytes_kv);
    TensorView cache = TensorView::Contiguous(pool, s.kv, {n_pages, 2, ps, hkv, d});
    TensorView k, v;
    Check(SplitKVCache(cache, &k, &v));
    const auto run = [&](int i) {
      const int c = i % copies;
      Check((*w)->Run(TensorView::Contiguous(qs[c], DType::kBF16, {s.b, hq, d}), k, v,
                      TensorView::Contiguous(tables[c], DType::kI32, {pages}),
                      TensorView::Contiguous(outs[c], DType::kBF16, {s.b, hq, d})));
    };
    const bench::Timings t = Time(run);
    bench::Report("decode",
                  fmt::format("{} B={} L={}", s.kv == DType::kBF16 ? "bf16" : "e4m3kv", s.b, s.len),
                  t.alone, double(kv_bytes), 0,
                  fmt::format("stages {}", ops::DecodeStages(d, DTypeBytes(s.kv))) +
                      bench::TimingsNote(t, double(kv_bytes)));
  }
  // Single-request decode (contiguous KV, split over the SMs).
  for (int len : {1024, 4096, 16384, 32768}) {
    if (!opt.Wants(fmt::format("s{}", len))) continue;
    const size_t wsb = SingleDecodeWorkspaceBytes(hq, d);
    void* sws = bench::DeviceAlloc(wsb);
    void* q = bench::DeviceAlloc(size_t(hq) * d * 2);
    void* out = bench::DeviceAlloc(size_t(hq) * d * 2);
    bench::DeviceFillRandom16(q, size_t(hq) * d, 1.f);
    const int64_t kv_elems = int64_t(len) * hkv * d;
    const int copies =
        bench::DryRun() ? 1 : int(std::clamp<int64_t>((1LL << 30) / (kv_elems * 4), 1, 16));
    const auto run = [&](int i) {
      char* base = static_cast<char*>(pool) + (i % copies) * kv_elems * 4;
      Check(SingleDecode(engine, TensorView::Contiguous(q, DType::kBF16, {hq, d}),
                         TensorView::Contiguous(base, DType::kBF16, {len, hkv, d}),
                         TensorView::Contiguous(base + kv_elems * 2, DType::kBF16, {len, hkv, d}),
                         TensorView::Contiguous(out, DType::kBF16, {hq, d}), {}, KVLayout::kNHD, {},
                         sws, wsb));
    };
    const bench::Timings t = Time(run);
    bench::Report("single_decode", fmt::format("bf16 L={}", len), t.alone, double(kv_elems) * 4, 0,
                  bench::TimingsNote(t, double(kv_elems) * 4));
  }
  return 0;
}
