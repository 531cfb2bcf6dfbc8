// RoPE (indptr, pos_ids, Llama 3.1, cos/sin cache; NeoX and interleaved; partial rotary_dim;
// in place and out of place) against the fp64 reference.
#include <flashjit/rope.h>
#include <fmt/format.h>

#include <array>
#include <catch2/catch.hpp>
#include <cmath>

#include "src/ops/rope/rope_spec.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/half.h"
#include "tests/reference/rope_ref.h"
#include "tools/bench/layer_sweeps.h"

namespace flashjit::test {
namespace {

enum class Form { kIndptr, kPosIds, kLlamaIndptr, kLlamaPosIds, kCache };

struct Case {
  DType dtype = DType::kBF16;
  Form form = Form::kPosIds;
  int64_t nnz = 7, hq = 4, hk = 2, head_dim = 128, rotary_dim = 128;
  bool interleave = false, inplace = false;
  const ops::RopeSpec* force = nullptr;  // pos_ids form: this kernel instead of the chooser's
  int64_t max_pos_id = 9000;             // pos_ids forms: positions drawn from [0, max_pos_id]
  double tol = 0;                        // rel_l2 bound; 0: the dtype's default
};

template <class I>
DeviceBuffer UploadInts(const std::vector<I>& v) {
  DeviceBuffer b(v.size() * sizeof(I));
  b.Upload(v.data(), v.size() * sizeof(I));
  return b;
}

void Run(const Case& c, std::mt19937& rng) {
  // q and k live inside one [nnz, (hq + hk + 1) * head_dim] buffer (as slices of qkv); the
  // trailing "v" part must stay untouched.
  const int64_t width = (c.hq + c.hk + 1) * c.head_dim;
  std::vector<float> qkv = c.nnz * width > (1 << 20) ? FastRandom(c.nnz * width, rng, 2.f)
                                                     : RandomNormal(c.nnz * width, rng);
  std::vector<double> qkvd;
  DeviceBuffer din = Upload16(c.dtype, qkv, &qkvd);
  DeviceBuffer dout(c.nnz * width * 2);
  dout.Fill(0xFF);
  DeviceBuffer& dst = c.inplace ? din : dout;
  auto view = [&](void* base, int64_t head0, int64_t heads) {
    TensorView t = TensorView::Contiguous(static_cast<char*>(base) + head0 * c.head_dim * 2,
                                          c.dtype, {c.nnz, heads, c.head_dim});
    t.strides[0] = width;
    return t;
  };
  TensorView q = view(din.data(), 0, c.hq), k = view(din.data(), c.hq, c.hk);
  TensorView qo = view(dst.data(), 0, c.hq), ko = view(dst.data(), c.hq, c.hk);

  // Positions: ragged requests with offsets (indptr forms), or random ids.
  std::vector<int32_t> indptr{0}, offsets;
  std::vector<int64_t> pos(c.nnz);
  std::uniform_int_distribution<int> len(0, 5), off(0, 9000);
  while (indptr.back() < c.nnz) {
    indptr.push_back(std::min<int32_t>(indptr.back() + len(rng), c.nnz));
    offsets.push_back(off(rng));
  }
  for (size_t b = 0; b + 1 < indptr.size(); ++b)
    for (int32_t t = indptr[b]; t < indptr[b + 1]; ++t) pos[t] = offsets[b] + (t - indptr[b]);
  const bool by_indptr = c.form == Form::kIndptr || c.form == Form::kLlamaIndptr;
  if (!by_indptr) {
    std::uniform_int_distribution<int64_t> far(0, c.max_pos_id);
    for (auto& p : pos) p = c.max_pos_id == 9000 ? off(rng) : far(rng);
    if (c.max_pos_id != 9000) pos[0] = c.max_pos_id;  // the largest position itself
  }
  std::vector<int32_t> pos32(pos.begin(), pos.end());
  DeviceBuffer dindptr = UploadInts(indptr), doff = UploadInts(offsets);
  DeviceBuffer dpos32 = UploadInts(pos32), dpos64 = UploadInts(pos);
  TensorView tindptr =
      TensorView::Contiguous(dindptr.data(), DType::kI32, {static_cast<int64_t>(indptr.size())});
  TensorView toff =
      TensorView::Contiguous(doff.data(), DType::kI32, {static_cast<int64_t>(offsets.size())});
  TensorView tpos32 = TensorView::Contiguous(dpos32.data(), DType::kI32, {c.nnz});
  TensorView tpos64 = TensorView::Contiguous(dpos64.data(), DType::kI64, {c.nnz});

  RopeOptions o{c.rotary_dim, c.interleave, 1.f, 1e4f};
  if (c.form == Form::kPosIds) o = {c.rotary_dim, c.interleave, 2.f, 5e5f};
  Llama31RopeOptions lo;
  lo.rotary_dim = c.rotary_dim;
  lo.interleave = c.interleave;
  std::vector<double> freqs = (c.form == Form::kLlamaIndptr || c.form == Form::kLlamaPosIds)
                                  ? ref::Llama31Freqs(c.rotary_dim, 8, 5e5, 1, 4, 8192)
                                  : ref::RopeFreqs(c.rotary_dim, o.rope_scale, o.rope_theta);
  // vLLM cache: rows 0 .. max_pos - 1 of float cos | sin.
  const int64_t max_pos = 9001, half = c.rotary_dim / 2;
  std::vector<float> cache(max_pos * c.rotary_dim);
  for (int64_t p = 0; p < max_pos; ++p)
    for (int64_t i = 0; i < half; ++i) {
      cache[p * c.rotary_dim + i] = static_cast<float>(std::cos(p * freqs[i]));
      cache[p * c.rotary_dim + half + i] = static_cast<float>(std::sin(p * freqs[i]));
    }
  DeviceBuffer dcache(cache.size() * 4);
  dcache.Upload(cache.data(), cache.size() * 4);
  TensorView tcache = TensorView::Contiguous(dcache.data(), DType::kF32, {max_pos, c.rotary_dim});

  Engine& e = TestEngine();
  Status s;
  switch (c.form) {
    case Form::kIndptr:
      s = c.inplace ? ApplyRopeInplace(e, q, k, tindptr, toff, o)
                    : ApplyRope(e, q, k, qo, ko, tindptr, toff, o);
      break;
    case Form::kPosIds:
      if (c.force) {
        ops::RopeArgs a;
        a.mode = ops::RopeMode::kPosIds;
        a.q = q;
        a.k = k;
        a.q_out = c.inplace ? q : qo;
        a.k_out = c.inplace ? k : ko;
        a.pos = tpos32;
        a.rotary_dim = o.rotary_dim;
        a.interleave = o.interleave;
        a.rope_scale = o.rope_scale;
        a.rope_theta = o.rope_theta;
        s = ops::RunRope(e, a, nullptr, c.force);
        break;
      }
      s = c.inplace ? ApplyRopePosIdsInplace(e, q, k, tpos32, o)
                    : ApplyRopePosIds(e, q, k, qo, ko, tpos32, o);
      break;
    case Form::kLlamaIndptr:
      s = c.inplace ? ApplyLlama31RopeInplace(e, q, k, tindptr, toff, lo)
                    : ApplyLlama31Rope(e, q, k, qo, ko, tindptr, toff, lo);
      break;
    case Form::kLlamaPosIds:
      s = c.inplace ? ApplyLlama31RopePosIdsInplace(e, q, k, tpos64, lo)
                    : ApplyLlama31RopePosIds(e, q, k, qo, ko, tpos64, lo);
      break;
    case Form::kCache:
      s = c.inplace ? ApplyRopeWithCosSinCacheInplace(e, tpos64, q, k, c.head_dim, tcache,
                                                      !c.interleave, nullptr, max_pos - 1)
                    : ApplyRopeWithCosSinCache(e, tpos64, q, k, qo, ko, c.head_dim, tcache,
                                               !c.interleave);
      break;
  }
  INFO(s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;

  std::vector<float> got = Download16(c.dtype, dst, c.nnz * width);
  std::vector<double> ref;
  std::vector<float> g;
  int64_t outside = 0;
  for (int64_t t = 0; t < c.nnz; ++t) {
    std::vector<double> cs(half), sn(half);
    for (int64_t i = 0; i < half; ++i) {
      cs[i] =
          c.form == Form::kCache ? cache[pos[t] * c.rotary_dim + i] : std::cos(pos[t] * freqs[i]);
      sn[i] = c.form == Form::kCache ? cache[pos[t] * c.rotary_dim + half + i]
                                     : std::sin(pos[t] * freqs[i]);
    }
    for (int64_t h = 0; h < c.hq + c.hk; ++h) {
      const int64_t base = t * width + h * c.head_dim;
      std::vector<double> x(qkvd.begin() + base, qkvd.begin() + base + c.head_dim);
      for (double v : ref::RotateHead(x, cs, sn, c.rotary_dim, c.interleave)) ref.push_back(v);
      for (int64_t d = 0; d < c.head_dim; ++d) g.push_back(got[base + d]);
    }
    for (int64_t d = (c.hq + c.hk) * c.head_dim; d < width; ++d) {
      const float v = got[t * width + d];
      outside += c.inplace ? v != static_cast<float>(qkvd[t * width + d]) : !std::isnan(v);
    }
  }
  ErrorStats err = Compare(g, ref);
  INFO(
      fmt::format("rope form {} {} nnz {} heads {}/{} dim {} rotary {} interleave {} inplace {}: "
                  "{}",
                  static_cast<int>(c.form), DTypeName(c.dtype), c.nnz, c.hq, c.hk, c.head_dim,
                  c.rotary_dim, c.interleave, c.inplace, err.ToString()));
  CHECK(err.non_finite == 0);
  CHECK(err.rel_l2 < (c.tol > 0 ? c.tol : c.dtype == DType::kBF16 ? 8e-3 : 2e-3));
  CHECK(outside == 0);
}

TEST_CASE("rope: every form, layout and flag against the fp64 reference", "[gpu][layer][rope]") {
  std::mt19937 rng(Seed());
  for (Form form :
       {Form::kIndptr, Form::kPosIds, Form::kLlamaIndptr, Form::kLlamaPosIds, Form::kCache})
    for (bool interleave : {false, true})
      for (bool inplace : {false, true})
        for (int64_t rotary : {128, 64}) {
          Case c;
          c.form = form;
          c.interleave = interleave;
          c.inplace = inplace;
          c.rotary_dim = rotary;
          c.nnz = 37;
          Run(c, rng);
        }
}

TEST_CASE("rope: shapes, dtypes and head counts", "[gpu][layer][rope]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (int64_t nnz : {1, 2, 64, 1000, 4099}) {
      Case c;
      c.dtype = dtype;
      c.nnz = nnz;
      c.hq = 32;
      c.hk = 8;
      Run(c, rng);
    }
  // head_dim 64 / 256 / 80, partial rotary with a NeoX half of 8, odd head counts.
  for (auto [hd, rd, hq, hk] : std::vector<std::array<int64_t, 4>>{
           {64, 64, 5, 1}, {256, 256, 3, 3}, {80, 80, 7, 2}, {96, 16, 2, 1}, {128, 2, 1, 1}})
    for (bool interleave : {false, true}) {
      Case c;
      c.head_dim = hd;
      c.rotary_dim = rd;
      c.hq = hq;
      c.hk = hk;
      c.interleave = interleave;
      c.nnz = 19;
      Run(c, rng);
    }
}

// Long-context positions, up to 2^24 (float(pos) is exact up to there): the angle is reduced in
// float from the exact product of the position and the frequency held in two floats, so the
// error stays at the output's rounding (simulated on this data: bf16 1.7e-3, f16 2.1e-4).
// Frequencies rounded to one float (the previous path) give, simulated, 2.2e-3 / 1.4e-3 at 2^20
// and 2.1e-2 at 2^24, which the bounds below (bf16 2.5e-3, f16 6e-4) reject.
// The pos_ids form runs the default (row) kernel, then the warp and the tile kernel (forced),
// which take their angles from the same helpers.
TEST_CASE("rope: long-context positions keep the angle accurate", "[gpu][layer][rope]") {
  std::mt19937 rng(Seed());
  ops::RopeSpec warp, tile;
  warp.kernel = 0;
  tile.kernel = 1;
  tile.items = 5;
  for (DType dtype : {DType::kBF16, DType::kF16})
    for (Form form : {Form::kPosIds, Form::kLlamaPosIds})
      for (bool interleave : {false, true})
        for (int64_t max_pos : {int64_t{1} << 20, int64_t{1} << 24})
          for (const ops::RopeSpec* force :
               std::array<const ops::RopeSpec*, 3>{nullptr, &warp, &tile}) {
            if (force && form != Form::kPosIds) continue;
            Case c;
            c.force = force;
            c.dtype = dtype;
            c.form = form;
            c.interleave = interleave;
            c.nnz = 300;
            c.hq = 4;
            c.hk = 2;
            c.max_pos_id = max_pos;
            c.tol = dtype == DType::kBF16 ? 2.5e-3 : 6e-4;
            Run(c, rng);
          }
}

}  // namespace
}  // namespace flashjit::test

namespace flashjit::test {
namespace {

TEST_CASE("rope: 16k tokens, every form, against the fp64 reference", "[gpu][layer][rope]") {
  std::mt19937 rng(Seed());
  // The benchmark shape (32/8 heads), NeoX and interleaved; then every form at 8/2 heads.
  for (bool interleave : {false, true}) {
    Case c;
    c.nnz = 16384;
    c.hq = 32;
    c.hk = 8;
    c.interleave = interleave;
    Run(c, rng);
  }
  for (Form form :
       {Form::kIndptr, Form::kPosIds, Form::kLlamaIndptr, Form::kLlamaPosIds, Form::kCache}) {
    Case c;
    c.form = form;
    c.nnz = 16384;
    c.hq = 8;
    c.hk = 2;
    c.inplace = form == Form::kLlamaPosIds || form == Form::kIndptr;
    c.interleave = form == Form::kCache || form == Form::kLlamaIndptr;
    Run(c, rng);
  }
}

// Every kernel configuration the benchmark sweeps (tools/bench/layer_sweeps.h), forced, so any of
// them can become the default: row kernel slots / heads in flight / grid, warp and tile kernels.
TEST_CASE("rope: every swept kernel configuration", "[gpu][layer][rope]") {
  std::mt19937 rng(Seed());
  const std::vector<ops::RopeSpec> specs = bench::RopeSweep();
  for (const ops::RopeSpec& f : specs)
    for (bool interleave : {false, true})
      for (int64_t nnz : {3, 301}) {
        Case c;
        c.form = Form::kPosIds;
        c.force = &f;
        c.nnz = nnz;
        c.hq = 32;
        c.hk = 8;
        c.interleave = interleave;
        c.inplace = nnz == 3;
        c.rotary_dim = interleave ? 128 : 64;
        INFO(fmt::format("kernel {} warps {} items {} slots {} full grid {} min blocks {}",
                         f.kernel, f.warps, f.items, f.slots, f.full_grid, f.minb));
        Run(c, rng);
      }
}

}  // namespace
}  // namespace flashjit::test
