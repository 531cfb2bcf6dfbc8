// append_paged_kv_cache (NHD / HND, combined / separate caches, 16-bit and fp8) and
// get_batch_indices_positions against host references.
#include <flashjit/page.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "src/ops/page/page_spec.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/half.h"
#include "tests/reference/page_ref.h"
#include "tools/bench/layer_sweeps.h"

namespace flashjit::test {
namespace {

DeviceBuffer UploadI32(const std::vector<int32_t>& v) {
  DeviceBuffer b(v.size() * 4 + 4);
  b.Upload(v.data(), v.size() * 4);
  return b;
}

TensorView I32(const DeviceBuffer& b, size_t n) {
  return TensorView::Contiguous(b.data(), DType::kI32, {static_cast<int64_t>(n)});
}

struct Case {
  DType dtype = DType::kBF16, cache = DType::kBF16;
  KvLayout layout = KvLayout::kNHD;
  bool combined = true;
  int64_t heads = 8, head_dim = 128, page_size = 16, batch = 5;
  float k_scale = 1.f, v_scale = 1.f;
  int max_new = 35;    // new tokens per request: 0 .. max_new (request 0: page_size + 1)
  int first_new = -1;  // >= 0: request 0 appends this many instead
  const ops::AppendKvSpec* force = nullptr;  // this kernel form instead of the chooser's
  int max_grid = 0;  // > 0: the loop form's grid capped (many tiles per block)
};

// K (0) or V (1) half of a combined [pages, 2, ...] cache as a 4-D view.
TensorView KvHalf(const TensorView& cache, int which) {
  TensorView t = cache;
  t.ndim = 4;
  for (int d = 1; d < 4; ++d) {
    t.shape[d] = cache.shape[d + 1];
    t.strides[d] = cache.strides[d + 1];
  }
  t.data = static_cast<char*>(cache.data) + which * cache.strides[1] * DTypeBytes(cache.dtype);
  return t;
}

void Run(const Case& c, std::mt19937& rng) {
  // Requests with existing lengths and new tokens; pages handed out in a shuffled order.
  std::uniform_int_distribution<int> old_len(0, 40), new_len(0, c.max_new);
  std::vector<int32_t> append_indptr{0}, seq_lens, kv_indptr{0}, last_page_len;
  for (int64_t b = 0; b < c.batch; ++b) {
    const int first = c.first_new >= 0 ? c.first_new : static_cast<int>(c.page_size) + 1;
    const int n = b == 0 ? first : new_len(rng), old = old_len(rng);
    append_indptr.push_back(append_indptr.back() + n);
    seq_lens.push_back(old + n);
    const int pages = (old + n + c.page_size - 1) / c.page_size;
    kv_indptr.push_back(kv_indptr.back() + pages);
    last_page_len.push_back(old + n == 0 ? 0 : (old + n - 1) % c.page_size + 1);
  }
  const int64_t nnz = append_indptr.back(), num_pages = kv_indptr.back() + 3;
  std::vector<int32_t> kv_indices(num_pages);
  for (int64_t i = 0; i < num_pages; ++i) kv_indices[i] = static_cast<int32_t>(i);
  std::shuffle(kv_indices.begin(), kv_indices.end(), rng);
  kv_indices.resize(kv_indptr.back());

  // get_batch_indices_positions on the device first; the append then uses its outputs.
  DeviceBuffer dai = UploadI32(append_indptr), dsl = UploadI32(seq_lens);
  DeviceBuffer dbi(nnz * 4 + 4), dpos(nnz * 4 + 4);
  dbi.Fill(0xFF);
  dpos.Fill(0xFF);
  Engine& e = TestEngine();
  Status s = GetBatchIndicesPositions(e, I32(dai, append_indptr.size()), I32(dsl, seq_lens.size()),
                                      I32(dbi, nnz), I32(dpos, nnz));
  INFO(s.ToString());
  REQUIRE(s.ok());
  std::vector<int32_t> bi(nnz), pos(nnz);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int32_t j = append_indptr[b]; j < append_indptr[b + 1]; ++j) {
      bi[j] = static_cast<int32_t>(b);
      pos[j] = seq_lens[b] - (append_indptr[b + 1] - append_indptr[b]) + (j - append_indptr[b]);
    }

  const int64_t row = c.heads * c.head_dim;
  auto random = [&](int64_t n) {
    return n > (1 << 20) ? FastRandom(n, rng, 4.f) : RandomNormal(n, rng, 2.f);
  };
  std::vector<float> k = random(nnz * row), v = random(nnz * row);
  std::vector<double> kd, vd;
  DeviceBuffer dk = Upload16(c.dtype, k, &kd), dv = Upload16(c.dtype, v, &vd);
  const int cb = DTypeBytes(c.cache);
  const int64_t page_elems = c.page_size * row;
  DeviceBuffer dcache(num_pages * 2 * page_elems * cb);
  dcache.Fill(0xFF);
  DeviceBuffer dki = UploadI32(kv_indices), dkp = UploadI32(kv_indptr);
  DeviceBuffer dlp = UploadI32(last_page_len);
  TensorView tk = TensorView::Contiguous(dk.data(), c.dtype, {nnz, c.heads, c.head_dim});
  TensorView tv = TensorView::Contiguous(dv.data(), c.dtype, {nnz, c.heads, c.head_dim});
  const bool nhd = c.layout == KvLayout::kNHD;
  const int64_t d1 = nhd ? c.page_size : c.heads, d2 = nhd ? c.heads : c.page_size;
  if (c.combined) {
    TensorView cache =
        TensorView::Contiguous(dcache.data(), c.cache, {num_pages, 2, d1, d2, c.head_dim});
    s = ops::AppendPagedKvCacheWith(e, tk, tv, I32(dbi, nnz), I32(dpos, nnz), KvHalf(cache, 0),
                                    KvHalf(cache, 1), I32(dki, kv_indices.size()),
                                    I32(dkp, kv_indptr.size()), I32(dlp, last_page_len.size()),
                                    c.layout, c.k_scale, c.v_scale, nullptr, c.force, c.max_grid);
    if (s.ok() && !c.force)  // the public combined-cache entry point too (same bytes again)
      s = AppendPagedKvCache(e, tk, tv, I32(dbi, nnz), I32(dpos, nnz), cache,
                             I32(dki, kv_indices.size()), I32(dkp, kv_indptr.size()),
                             I32(dlp, last_page_len.size()), c.layout, c.k_scale, c.v_scale);
  } else {
    // Separate caches: K in the first half of the buffer, V in the second.
    char* base = static_cast<char*>(dcache.data());
    TensorView kc = TensorView::Contiguous(base, c.cache, {num_pages, d1, d2, c.head_dim});
    TensorView vc = TensorView::Contiguous(base + num_pages * page_elems * cb, c.cache,
                                           {num_pages, d1, d2, c.head_dim});
    s = ops::AppendPagedKvCacheWith(e, tk, tv, I32(dbi, nnz), I32(dpos, nnz), kc, vc,
                                    I32(dki, kv_indices.size()), I32(dkp, kv_indptr.size()),
                                    I32(dlp, last_page_len.size()), c.layout, c.k_scale, c.v_scale,
                                    nullptr, c.force, c.max_grid);
  }
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;

  std::vector<int32_t> got_bi(nnz), got_pos(nnz);
  dbi.Download(got_bi.data(), nnz * 4);
  dpos.Download(got_pos.data(), nnz * 4);
  CHECK(got_bi == bi);
  CHECK(got_pos == pos);

  // Expected cache bytes: poison everywhere, new rows at their page and slot.
  std::vector<uint8_t> want(dcache.bytes(), 0xFF), got(dcache.bytes());
  dcache.Download(got.data(), got.size());
  auto offset = [&](bool is_v, int64_t page, int64_t slot, int64_t h) {
    const int64_t within =
        nhd ? (slot * c.heads + h) * c.head_dim : (h * c.page_size + slot) * c.head_dim;
    return c.combined ? (page * 2 + is_v) * page_elems + within
                      : (is_v * num_pages + page) * page_elems + within;
  };
  for (int64_t t = 0; t < nnz; ++t) {
    const int64_t page = kv_indices[kv_indptr[bi[t]] + pos[t] / c.page_size];
    const int64_t slot = pos[t] % c.page_size;
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t d = 0; d < c.head_dim; ++d)
        for (int is_v = 0; is_v < 2; ++is_v) {
          const double x = (is_v ? vd : kd)[(t * c.heads + h) * c.head_dim + d];
          const int64_t at = (offset(is_v, page, slot, h) + d) * cb;
          if (cb == 1) {
            const float scaled = static_cast<float>(x) * (1.f / (is_v ? c.v_scale : c.k_scale));
            want[at] = ref::DoubleToFp8Saturate(c.cache, scaled);
          } else {
            const uint16_t bits = ref::FloatTo16(c.cache, static_cast<float>(x));
            std::memcpy(&want[at], &bits, 2);
          }
        }
  }
  int64_t wrong = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && wrong++ == 0) first = static_cast<int64_t>(i);
  INFO(
      fmt::format("append {} -> {} {} combined {} heads {} dim {} page {}: {} bytes wrong, first "
                  "at {}",
                  DTypeName(c.dtype), DTypeName(c.cache), nhd ? "NHD" : "HND", c.combined, c.heads,
                  c.head_dim, c.page_size, wrong, first));
  CHECK(wrong == 0);
}

TEST_CASE("append_paged_kv_cache writes every new row and nothing else", "[gpu][layer][page]") {
  std::mt19937 rng(Seed());
  for (KvLayout layout : {KvLayout::kNHD, KvLayout::kHND})
    for (bool combined : {true, false})
      for (DType dtype : {DType::kBF16, DType::kF16}) {
        Case c;
        c.layout = layout;
        c.combined = combined;
        c.dtype = c.cache = dtype;
        Run(c, rng);
      }
  for (DType fp8 : {DType::kF8E4M3, DType::kF8E5M2})
    for (KvLayout layout : {KvLayout::kNHD, KvLayout::kHND}) {
      Case c;
      c.cache = fp8;
      c.layout = layout;
      c.k_scale = 0.01f;  // pushes large values past the fp8 range: saturation
      c.v_scale = 1.5f;
      Run(c, rng);
    }
  for (auto [heads, dim, page] :
       std::vector<std::array<int64_t, 3>>{{1, 64, 1}, {3, 256, 5}, {2, 7, 16}, {8, 128, 64}}) {
    Case c;
    c.heads = heads;
    c.head_dim = dim;
    c.page_size = page;
    c.batch = 9;
    Run(c, rng);
  }
}

TEST_CASE("append_paged_kv_cache: 1 to 16k tokens", "[gpu][layer][page]") {
  std::mt19937 rng(Seed());
  // 1 token; 64 requests of 0 .. 511 new tokens (about 16k), 16-bit and fp8, NHD and HND.
  {
    Case c;
    c.batch = 1;
    c.first_new = 1;
    Run(c, rng);
  }
  for (auto [cache, layout] : std::vector<std::pair<DType, KvLayout>>{
           {DType::kBF16, KvLayout::kNHD}, {DType::kF8E4M3, KvLayout::kHND}}) {
    Case c;
    c.cache = cache;
    c.layout = layout;
    c.batch = 64;
    c.max_new = 511;
    c.k_scale = c.v_scale = cache == DType::kBF16 ? 1.f : 0.5f;
    Run(c, rng);
  }
  // More requests than a warp's lanes hold: 100 and 300 requests, NHD and HND.
  for (int64_t batch : {100, 300})
    for (KvLayout layout : {KvLayout::kNHD, KvLayout::kHND}) {
      Case c;
      c.layout = layout;
      c.batch = batch;
      c.max_new = 40;
      Run(c, rng);
    }
}

TEST_CASE("append_paged_kv_cache: every kernel form, forced", "[gpu][layer][page]") {
  std::mt19937 rng(Seed());
  // Every form the benchmark sweeps (tools/bench/layer_sweeps.h), forced; the loop forms also
  // with their grid capped to 1, 3 and 7 blocks, so that each block walks many tiles (at these
  // sizes a resident wave takes every tile in one step) and the grid stride is not a multiple of
  // a token's items.
  const std::vector<ops::AppendKvSpec> forms = bench::AppendKvSweep();
  for (const ops::AppendKvSpec& f : forms)
    for (int max_grid : f.loop ? std::vector<int>{0, 1, 3, 7} : std::vector<int>{0})
      for (auto [heads, dim, page] :
           std::vector<std::array<int64_t, 3>>{{8, 128, 16}, {1, 64, 1}, {3, 40, 5}}) {
        Case c;
        c.force = &f;
        c.max_grid = max_grid;
        c.heads = heads;
        c.head_dim = dim;
        c.page_size = page;
        c.batch = 12;
        c.max_new = 120;
        c.combined = heads != 3;
        if (max_grid == 3 && heads == 3) {  // the loop form with an fp8 cache too
          c.cache = DType::kF8E4M3;
          c.k_scale = c.v_scale = 0.5f;
        }
        INFO(fmt::format("form tokens {} loop {} threads {} items {} max grid {}", f.tokens, f.loop,
                         f.threads, f.items, max_grid));
        Run(c, rng);
      }
}

}  // namespace
}  // namespace flashjit::test
