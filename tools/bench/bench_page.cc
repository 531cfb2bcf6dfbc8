// append_paged_kv_cache bandwidth. Bytes that must move: read new k and v, write them into the
// cache (+ batch index and position per token). Requests get disjoint shuffled pages.
#include <flashjit/page.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/ops/page/page_spec.h"
#include "src/runtime/driver.h"
#include "tools/bench/append_layout.h"
#include "tools/bench/bench_util.h"
#include "tools/bench/layer_sweeps.h"
#include "tools/bench/model_shapes.h"

using namespace flashjit;

namespace {

void* UploadI32(const std::vector<int32_t>& v) {
  void* p = bench::DeviceAlloc(v.size() * 4 + 4);
  if (!bench::DryRun())
    (*runtime::Driver())->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(p), v.data(), v.size() * 4);
  return p;
}

// The ceiling for an append's bytes, timed the same two ways: one device-to-device copy of the
// new k and v rows, i.e. the same bytes read and written as an append of `nnz` tokens (less its
// 8 B of indices per token).
void BenchCopy(int64_t nnz, int64_t heads = 8, int64_t dim = 128) {
  if (bench::DryRun()) return;
  const size_t bytes = 2 * nnz * heads * dim * 2;  // k and v rows, bf16
  void* src = bench::DeviceAlloc(bytes);
  void* dst = bench::DeviceAlloc(bytes);
  bench::DeviceFillRandom16(src, bytes / 2, 1.f);
  bench::ReportDeviceCopy(src, dst, bytes,
                          fmt::format("append's bytes: nnz {} h {} d {} (2 x {:.1f} MB)", nnz,
                                      heads, dim, bytes / 1e6));
}

// `force`: time that kernel form instead of the chooser's pick.
void Bench(Engine& engine, int64_t nnz, int64_t batch, KvLayout layout, DType cache_dt,
           const ops::AppendKvSpec* force = nullptr, int64_t heads = 8, int64_t dim = 128,
           int64_t page = 16) {
  const DType dt = DType::kBF16;
  // Each request appends nnz / batch tokens after 100 existing ones.
  const bench::AppendLayout l = bench::MakeAppendLayout(nnz, batch, page);
  const int64_t pages = l.pages;
  const size_t row_bytes = nnz * heads * dim * 2;
  const int copies = row_bytes >= (32u << 20)
                         ? 1
                         : std::min<int>(64, static_cast<int>((160u << 20) / (2 * row_bytes) + 1));
  std::vector<void*> ks, vs;
  for (int c = 0; c < copies; ++c) {
    ks.push_back(bench::DeviceAlloc(row_bytes));
    vs.push_back(bench::DeviceAlloc(row_bytes));
    bench::DeviceFillRandom16(ks.back(), row_bytes / 2, 1.f);
    bench::DeviceFillRandom16(vs.back(), row_bytes / 2, 1.f);
  }
  const int cb = DTypeBytes(cache_dt);
  void* cache = bench::DeviceAlloc(pages * 2 * page * heads * dim * cb);
  TensorView tbi = TensorView::Contiguous(UploadI32(l.batch_indices), DType::kI32, {nnz});
  TensorView tpos = TensorView::Contiguous(UploadI32(l.positions), DType::kI32, {nnz});
  TensorView tind = TensorView::Contiguous(UploadI32(l.kv_indices), DType::kI32, {pages});
  TensorView tptr = TensorView::Contiguous(UploadI32(l.kv_indptr), DType::kI32, {batch + 1});
  TensorView tlast = TensorView::Contiguous(UploadI32(l.last_page_len), DType::kI32, {batch});
  const bool nhd = layout == KvLayout::kNHD;
  TensorView tcache = TensorView::Contiguous(
      cache, cache_dt, {pages, 2, nhd ? page : heads, nhd ? heads : page, dim});
  const float scale = cb == 1 ? 0.5f : 1.f;
  // K and V halves of the combined cache, for the forced (internal) entry point.
  TensorView kc = tcache, vc = tcache;
  kc.ndim = vc.ndim = 4;
  for (int d = 1; d < 4; ++d) {
    kc.shape[d] = vc.shape[d] = tcache.shape[d + 1];
    kc.strides[d] = vc.strides[d] = tcache.strides[d + 1];
  }
  vc.data = static_cast<char*>(cache) + tcache.strides[1] * cb;
  auto call = [&](int i) {
    const int c = i % copies;
    const TensorView tk = TensorView::Contiguous(ks[c], dt, {nnz, heads, dim});
    const TensorView tv = TensorView::Contiguous(vs[c], dt, {nnz, heads, dim});
    Status s = force ? ops::AppendPagedKvCacheWith(engine, tk, tv, tbi, tpos, kc, vc, tind, tptr,
                                                   tlast, layout, scale, scale, nullptr, force)
                     : AppendPagedKvCache(engine, tk, tv, tbi, tpos, tcache, tind, tptr, tlast,
                                          layout, scale, scale);
    if (!s.ok()) throw std::runtime_error(s.ToString());
  };
  const bench::Timings t = bench::TimeCall(call);
  const double moved = 2.0 * row_bytes + 2.0 * nnz * heads * dim * cb + nnz * 8.0;
  std::string note = force ? fmt::format("sweep {} t{} i{}",
                                         force->loop     ? "loop"
                                         : force->tokens ? "tokens"
                                                         : "item",
                                         force->threads, force->items)
                           : std::string("default");
  note += bench::TimingsNote(t, moved);
  bench::Report("append_paged_kv",
                fmt::format("{} nnz {} reqs {} h {} d {} page {} {}", DTypeName(cache_dt), nnz,
                            batch, heads, dim, page, nhd ? "NHD" : "HND"),
                t.alone, moved, 0, note);
}

// --models: the chooser's pick for one append shape (NHD), pooled inputs; the layout and cache
// are made per shape (small). Beside the large ones, the driver's copy of the same bytes.
void BenchModel(Engine& engine, int64_t nnz, int64_t heads, int64_t dim, int64_t page,
                DType cache_dt) {
  const DType dt = DType::kBF16;
  const int64_t batch = bench::ModelAppendBatch(nnz);
  const bench::AppendLayout l = bench::MakeAppendLayout(nnz, batch, page);
  const size_t row_bytes = nnz * heads * dim * 2;
  const int copies = bench::ModelCopies(2 * row_bytes);
  for (int c = 0; c < copies; ++c)
    bench::ModelBuffer(0, c, row_bytes), bench::ModelBuffer(1, c, row_bytes);
  const int cb = DTypeBytes(cache_dt);
  const size_t cache_bytes = l.pages * 2 * page * heads * dim * cb;
  void* cache = bench::ModelBuffer(7, 0, cache_bytes);
  // Index arrays, one set per layout (freed at exit).
  TensorView tbi = TensorView::Contiguous(UploadI32(l.batch_indices), DType::kI32, {nnz});
  TensorView tpos = TensorView::Contiguous(UploadI32(l.positions), DType::kI32, {nnz});
  TensorView tind = TensorView::Contiguous(UploadI32(l.kv_indices), DType::kI32, {l.pages});
  TensorView tptr = TensorView::Contiguous(UploadI32(l.kv_indptr), DType::kI32, {batch + 1});
  TensorView tlast = TensorView::Contiguous(UploadI32(l.last_page_len), DType::kI32, {batch});
  TensorView tcache = TensorView::Contiguous(cache, cache_dt, {l.pages, 2, page, heads, dim});
  const float scale = cb == 1 ? 0.5f : 1.f;
  auto call = [&](int i) {
    const int c = i % copies;
    const TensorView tk =
        TensorView::Contiguous(bench::ModelBuffer(0, c, row_bytes), dt, {nnz, heads, dim});
    const TensorView tv =
        TensorView::Contiguous(bench::ModelBuffer(1, c, row_bytes), dt, {nnz, heads, dim});
    Status s = AppendPagedKvCache(engine, tk, tv, tbi, tpos, tcache, tind, tptr, tlast,
                                  KvLayout::kNHD, scale, scale);
    if (!s.ok()) throw std::runtime_error(s.ToString());
  };
  const bench::Timings t = bench::TimeCall(call);
  const double moved = 2.0 * row_bytes + 2.0 * nnz * heads * dim * cb + nnz * 8.0;
  bench::Report("append_paged_kv",
                fmt::format("{} nnz {} reqs {} h {} d {} page {} NHD", DTypeName(cache_dt), nnz,
                            batch, heads, dim, page),
                t.alone, moved, 0, "model" + bench::TimingsNote(t, moved));
}

int64_t g_max_tokens = int64_t{1} << 40;  // --max-tokens N: only the model rows up to N tokens

void RunModels(Engine& engine) {
  for (int64_t nnz : bench::ModelTokens()) {
    if (nnz > g_max_tokens) continue;
    for (auto [heads, dim, page] : bench::ModelAppend())
      for (DType cdt : {DType::kBF16, DType::kF8E4M3})
        BenchModel(engine, nnz, heads, dim, page, cdt);
    // The ceiling of the large appends' bytes: the driver's copy of the new k and v rows.
    if (nnz >= 2048 && !bench::DryRun())
      for (int64_t heads : {1, 2, 4, 8})
        for (int64_t dim : {64, 128, 256}) {
          const size_t bytes = 2 * nnz * heads * dim * 2;
          bench::ReportDeviceCopy(bench::ModelBuffer(5, 0, bytes), bench::ModelBuffer(6, 0, bytes),
                                  bytes,
                                  fmt::format("append's bytes: nnz {} h {} d {} (2 x {:.1f} MB)",
                                              nnz, heads, dim, bytes / 1e6));
        }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--max-tokens")) g_max_tokens = std::atoll(argv[i + 1]);
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--models")) {
      RunModels(engine);
      return 0;
    }
  BenchCopy(16384);
  BenchCopy(8192);
  Bench(engine, 1, 1, KvLayout::kNHD, DType::kBF16);
  Bench(engine, 64, 64, KvLayout::kNHD, DType::kBF16);  // decode: one token per request
  Bench(engine, 16384, 64, KvLayout::kNHD, DType::kBF16);
  Bench(engine, 16384, 64, KvLayout::kHND, DType::kBF16);
  Bench(engine, 16384, 64, KvLayout::kNHD, DType::kF8E4M3);
  Bench(engine, 8192, 64, KvLayout::kNHD, DType::kBF16);
  // Sweep (same call): token-tile form over threads / items, and the per-item form (the previous
  // default; resolve-first for fp8). The same list as tests/gpu/page_test.cc.
  const std::vector<ops::AppendKvSpec> forms = bench::AppendKvSweep();  // layer_sweeps.h
  for (const ops::AppendKvSpec& f : forms) {
    Bench(engine, 16384, 64, KvLayout::kNHD, DType::kBF16, &f);
    Bench(engine, 16384, 64, KvLayout::kHND, DType::kBF16, &f);
    Bench(engine, 64, 64, KvLayout::kNHD, DType::kBF16, &f);
  }
  for (const ops::AppendKvSpec& f : {forms[0], forms[1], forms[6], forms[9]})
    Bench(engine, 16384, 64, KvLayout::kNHD, DType::kF8E4M3, &f);
  Bench(engine, 16384, 64, KvLayout::kNHD, DType::kBF16);  // the chooser's pick again
  // A/B in adjacent rows (run-to-run drift): the default token-tile form and its loop form.
  for (int rep = 0; rep < 2; ++rep)
    for (const ops::AppendKvSpec& f : {forms[5], forms[8], forms[9]})
      Bench(engine, 16384, 64, KvLayout::kNHD, DType::kBF16, &f);
  BenchCopy(16384);
  return 0;
}
