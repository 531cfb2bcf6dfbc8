// Attention-state merges (merge_state, merge_state_in_place, merge_states) against the fp64
// reference: every dtype, head dims from 1 to 512 (vector and scalar paths), strided views,
// outputs that alias an input, masks, interleaved states of one stacked tensor, and adversarial
// log-sum-exps (-inf states, rows of only -inf, NaN and +inf, values thousands apart).
#include <flashjit/cascade.h>
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/gpu/gpu_test_util.h"
#include "tests/reference/cascade_ref.h"
#include "tests/reference/half.h"

namespace flashjit::test {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// A strided tensor of `dtype` on the device: logical element (i0, i1, ...) at sum i_k * strides[k].
struct Strided {
  DType dtype;
  std::vector<int64_t> shape, strides;
  int64_t elems = 0;  // allocation, in elements
  DeviceBuffer buf;

  Strided(DType dt, std::vector<int64_t> sh, std::vector<int64_t> st)
      : dtype(dt), shape(sh), strides(st) {
    int64_t reach = 1;
    bool empty = false;
    for (size_t k = 0; k < sh.size(); ++k) {
      reach += (sh[k] - 1) * st[k];
      empty |= sh[k] == 0;
    }
    elems = empty ? 1 : reach;
    buf = DeviceBuffer(elems * DTypeBytes(dt));
    buf.Fill(0xFF);  // NaN poison
  }
  TensorView View() const {
    TensorView t;
    t.data = buf.data();
    t.dtype = dtype;
    t.ndim = static_cast<int>(shape.size());
    for (int k = 0; k < t.ndim; ++k) {
      t.shape[k] = shape[k];
      t.strides[k] = strides[k];
    }
    return t;
  }
  // Element offsets of the logical elements, in row-major order of the shape.
  std::vector<int64_t> Offsets() const {
    std::vector<int64_t> off = {0};
    for (size_t k = 0; k < shape.size(); ++k) {
      std::vector<int64_t> next;
      for (int64_t o : off)
        for (int64_t i = 0; i < shape[k]; ++i) next.push_back(o + i * strides[k]);
      off.swap(next);
    }
    return off;
  }
  // Writes `values` (logical order) into the buffer, rounded to dtype; returns what it holds.
  std::vector<double> Upload(const std::vector<float>& values) {
    const std::vector<int64_t> off = Offsets();
    const int bytes = DTypeBytes(dtype);
    std::vector<uint8_t> host(elems * bytes, 0xFF);
    std::vector<double> held(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == DType::kF32) {
        std::memcpy(&host[off[i] * 4], &values[i], 4);
        held[i] = values[i];
      } else {
        const uint16_t b = ref::FloatTo16(dtype, values[i]);
        std::memcpy(&host[off[i] * 2], &b, 2);
        held[i] = ref::From16(dtype, b);
      }
    }
    buf.Upload(host.data(), host.size());
    return held;
  }
  // The whole allocation as floats (to see poison outside the view too).
  std::vector<float> DownloadAll() const {
    const int bytes = DTypeBytes(dtype);
    std::vector<uint8_t> host(elems * bytes);
    buf.Download(host.data(), host.size());
    std::vector<float> out(elems);
    for (int64_t i = 0; i < elems; ++i) {
      if (dtype == DType::kF32) {
        std::memcpy(&out[i], &host[i * 4], 4);
      } else {
        uint16_t b;
        std::memcpy(&b, &host[i * 2], 2);
        out[i] = ref::From16(dtype, b);
      }
    }
    return out;
  }
};

// Log-sum-exps for rows x n states: normal with spread 8, and per row pattern adversarial rows.
std::vector<float> Lse(int64_t rows, int n, std::mt19937& rng, bool adversarial) {
  std::vector<float> s = RandomNormal(rows * n, rng, 8.f);
  if (!adversarial || n == 0) return s;
  for (int64_t r = 0; r < rows; ++r) {
    float* sr = &s[r * n];
    switch (r % 29) {
      case 3:
        for (int i = 0; i < n; ++i) sr[i] = -kInf;
        break;  // no keys at all
      case 5:
        sr[r % n] = -kInf;
        break;  // one empty state
      case 7:
        sr[r % n] = kNaN;
        break;
      case 11:
        sr[r % n] = kInf;
        break;
      case 13:
        for (int i = 0; i < n; ++i) sr[i] = (i % 2 ? 3000.f : -3000.f) + i;
        break;
      case 17:
        for (int i = 0; i < n; ++i) sr[i] = -500000.f + i;
        break;  // far from 0, finite
      default:
        break;
    }
  }
  return s;
}

// Two log-sum-exps per row (Lse's patterns), as the separate tensors of merge_state.
std::pair<std::vector<float>, std::vector<float>> TwoLse(int64_t rows, std::mt19937& rng) {
  const std::vector<float> s2 = Lse(rows, 2, rng, true);
  std::vector<float> a(rows), b(rows);
  for (int64_t r = 0; r < rows; ++r) {
    a[r] = s2[r * 2];
    b[r] = s2[r * 2 + 1];
  }
  return {a, b};
}

// Lse's [rows, n] patterns laid out as a stacked [seq, n, heads] tensor.
std::vector<float> StackedLse(int64_t seq, int n, int64_t heads, std::mt19937& rng) {
  const std::vector<float> lse = Lse(seq * heads, n, rng, true);
  std::vector<float> out(seq * n * heads);
  for (int64_t q = 0; q < seq; ++q)
    for (int i = 0; i < n; ++i)
      for (int64_t h = 0; h < heads; ++h)
        out[(q * n + i) * heads + h] = lse[(q * heads + h) * n + i];
  return out;
}

// Stacked v [seq, n, heads, d] and s [seq, n, heads] as the reference's [rows, n, d] / [rows, n].
void ByRow(const std::vector<double>& v, const std::vector<double>& s, int64_t seq, int n,
           int64_t heads, int64_t d, std::vector<double>* v_rows, std::vector<double>* s_rows) {
  v_rows->resize(seq * heads * n * d);
  s_rows->resize(seq * heads * n);
  for (int64_t q = 0; q < seq; ++q)
    for (int i = 0; i < n; ++i)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t r = q * heads + h;
        (*s_rows)[r * n + i] = s[(q * n + i) * heads + h];
        for (int64_t c = 0; c < d; ++c)
          (*v_rows)[(r * n + i) * d + c] = v[((q * n + i) * heads + h) * d + c];
      }
}

double Tolerance(DType dtype) {
  return dtype == DType::kBF16 ? 1.0 / 128 : (dtype == DType::kF16 ? 1.0 / 1024 : 2e-6);
}

// Checks rows x d outputs (logical order) against the reference: NaN rows NaN, the rest within
// the dtype's rounding plus fp32 accumulation relative to the inputs' magnitude.
void CheckOutputs(DType dtype, const std::vector<float>& v_got, const std::vector<float>& s_got,
                  const std::vector<double>& v_ref, const std::vector<double>& s_ref,
                  const std::vector<double>& v_in, int n, int64_t rows, int64_t d,
                  const std::string& what) {
  int64_t bad_v = 0, bad_s = 0;
  std::string first;
  for (int64_t r = 0; r < rows; ++r) {
    double scale = 0;
    for (int64_t i = 0; i < n * d; ++i) scale = std::max(scale, std::abs(v_in[r * n * d + i]));
    for (int64_t c = 0; c < d; ++c) {
      const double want = v_ref[r * d + c], got = v_got[r * d + c];
      const bool ok = std::isnan(want) ? std::isnan(got)
                                       : std::abs(got - want) <=
                                             Tolerance(dtype) * std::abs(want) + 1e-5 * scale;
      if (!ok && bad_v++ == 0)
        first = fmt::format("v row {} col {}: got {} want {}", r, c, got, want);
    }
    if (!s_got.empty()) {
      const double want = s_ref[r], got = s_got[r];
      const bool ok = std::isnan(want) ? std::isnan(got)
                      : std::isinf(want)
                          ? got == want
                          : std::abs(got - want) <= 1e-5 * std::max(1.0, std::abs(want));
      if (!ok && bad_s++ == 0) first += fmt::format(" s row {}: got {} want {}", r, got, want);
    }
  }
  INFO(what << ": " << first);
  CHECK(bad_v == 0);
  CHECK(bad_s == 0);
}

// The logical values of a Strided download (row-major over its shape).
std::vector<float> Logical(const Strided& t) {
  const std::vector<float> all = t.DownloadAll();
  std::vector<float> out;
  for (int64_t o : t.Offsets()) out.push_back(all[o]);
  return out;
}

// Everything outside the view still holds the poison.
int64_t WrittenOutside(const Strided& t) {
  std::vector<float> all = t.DownloadAll();
  for (int64_t o : t.Offsets()) all[o] = kNaN;
  int64_t written = 0;
  for (float x : all) written += !std::isnan(x);
  return written;
}

// Interleaves two states per row for the reference: [rows, 2, d] and [rows, 2].
void Pair(const std::vector<double>& a, const std::vector<double>& b, int64_t rows, int64_t d,
          std::vector<double>* out) {
  out->resize(rows * 2 * d);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < d; ++c) {
      (*out)[(r * 2) * d + c] = a[r * d + c];
      (*out)[(r * 2 + 1) * d + c] = b[r * d + c];
    }
}

// merge_state with separate tensors; `pad` elements after each head row; `alias`: 0 none,
// 1 v_out/s_out are v_a/s_a, 2 they are v_b/s_b.
void RunPair(DType dtype, int64_t seq, int64_t heads, int64_t d, int64_t pad, int alias,
             bool with_s, std::mt19937& rng) {
  const int64_t rows = seq * heads, hs = d + pad, ss = heads * hs + pad;
  auto v_tensor = [&] { return Strided(dtype, {seq, heads, d}, {ss, hs, 1}); };
  auto s_tensor = [&] { return Strided(DType::kF32, {seq, heads}, {heads + 1, 1}); };
  Strided va = v_tensor(), vb = v_tensor(), vo = v_tensor();
  Strided sa = s_tensor(), sb = s_tensor(), so = s_tensor();
  const std::vector<double> va_h = va.Upload(RandomNormal(rows * d, rng));
  const std::vector<double> vb_h = vb.Upload(RandomNormal(rows * d, rng));
  const auto [s_a, s_b] = TwoLse(rows, rng);
  const std::vector<double> sa_h = sa.Upload(s_a), sb_h = sb.Upload(s_b);
  std::vector<double> v_in, s_in, v_ref, s_ref;
  Pair(va_h, vb_h, rows, d, &v_in);
  Pair(sa_h, sb_h, rows, 1, &s_in);
  ref::MergeStates(v_in, s_in, rows, 2, d, &v_ref, &s_ref);

  Strided& v_out = alias == 1 ? va : (alias == 2 ? vb : vo);
  Strided& s_out = alias == 1 ? sa : (alias == 2 ? sb : so);
  const Status st = MergeState(TestEngine(), va.View(), sa.View(), vb.View(), sb.View(),
                               v_out.View(), with_s ? s_out.View() : TensorView{});
  INFO(st.ToString());
  REQUIRE(st.ok());
  Synchronize();
  if (DryRun()) return;
  const std::string what = fmt::format("merge_state {} seq {} heads {} d {} pad {} alias {}",
                                       DTypeName(dtype), seq, heads, d, pad, alias);
  CheckOutputs(dtype, Logical(v_out), with_s ? Logical(s_out) : std::vector<float>{}, v_ref, s_ref,
               v_in, 2, rows, d, what);
  INFO(what);
  CHECK(WrittenOutside(v_out) == 0);
  CHECK(WrittenOutside(s_out) == 0);
  if (!with_s && alias == 0) {
    int64_t written = 0;
    for (float x : Logical(s_out)) written += !std::isnan(x);
    CHECK(written == 0);  // s_out absent: the poisoned tensor stays as it was
  }
}

TEST_CASE("merge_state matches the fp64 reference", "[gpu][cascade]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
    for (int64_t d : {1, 3, 64, 128, 256, 320, 512}) RunPair(dtype, 37, 5, d, 0, 0, true, rng);
    RunPair(dtype, 300, 32, 128, 0, 0, true, rng);
    RunPair(dtype, 64, 8, 128, 8, 0, true, rng);  // strided rows, vector path
    RunPair(dtype, 64, 8, 128, 3, 0, true, rng);  // odd strides: scalar path
    RunPair(dtype, 64, 8, 128, 0, 1, true, rng);  // out = a
    RunPair(dtype, 64, 8, 128, 0, 2, true, rng);  // out = b
    RunPair(dtype, 29, 4, 96, 0, 0, false, rng);  // no s_out
  }
}

// merge_state_in_place with a mask: rows masked out keep their bytes.
TEST_CASE("merge_state_in_place merges the rows its mask keeps", "[gpu][cascade]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32})
    for (bool masked : {false, true}) {
      const int64_t seq = 53, heads = 6, d = 128, rows = seq * heads;
      Strided v(dtype, {seq, heads, d}, {heads * d, d, 1}),
          vo(dtype, {seq, heads, d}, {heads * d, d, 1});
      Strided s(DType::kF32, {seq, heads}, {heads, 1}), so(DType::kF32, {seq, heads}, {heads, 1});
      const std::vector<double> v_h = v.Upload(RandomNormal(rows * d, rng));
      const std::vector<double> vo_h = vo.Upload(RandomNormal(rows * d, rng));
      const auto [s_a, s_b] = TwoLse(rows, rng);
      const std::vector<double> s_h = s.Upload(s_a), so_h = so.Upload(s_b);
      std::vector<uint8_t> keep(seq);
      for (auto& k : keep) k = masked ? static_cast<uint8_t>(rng() % 3 != 0) : 1;
      DeviceBuffer mask(seq);
      mask.Upload(keep.data(), seq);
      const std::vector<float> v_before = Logical(v), s_before = Logical(s);
      const TensorView m =
          masked ? TensorView::Contiguous(mask.data(), DType::kBool, {seq}) : TensorView{};
      const Status st =
          MergeStateInPlace(TestEngine(), v.View(), s.View(), vo.View(), so.View(), m);
      INFO(st.ToString());
      REQUIRE(st.ok());
      Synchronize();
      if (DryRun()) continue;
      std::vector<double> v_in, s_in, v_ref, s_ref;
      Pair(v_h, vo_h, rows, d, &v_in);
      Pair(s_h, so_h, rows, 1, &s_in);
      ref::MergeStates(v_in, s_in, rows, 2, d, &v_ref, &s_ref);
      std::vector<float> v_got = Logical(v), s_got = Logical(s);
      int64_t touched = 0;
      for (int64_t r = 0; r < rows; ++r) {
        if (keep[r / heads]) continue;
        for (int64_t c = 0; c < d; ++c) {
          const float a = v_got[r * d + c], b = v_before[r * d + c];
          touched += std::memcmp(&a, &b, 4) != 0;
          v_got[r * d + c] = static_cast<float>(v_ref[r * d + c]);  // so the check below passes
        }
        touched += std::memcmp(&s_got[r], &s_before[r], 4) != 0;
        s_got[r] = static_cast<float>(s_ref[r]);
      }
      const std::string what = fmt::format("in place {} masked {}", DTypeName(dtype), masked);
      INFO(what);
      CHECK(touched == 0);
      CheckOutputs(dtype, v_got, s_got, v_ref, s_ref, v_in, 2, rows, d, what);
    }
}

// merge_states over a stacked tensor, n from 0 to 100 states; and in place over two states of
// one stacked tensor (interleaved views).
TEST_CASE("merge_states matches the fp64 reference", "[gpu][cascade]") {
  std::mt19937 rng(Seed());
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32})
    for (int n : {0, 1, 2, 3, 7, 100}) {
      const int64_t seq = n >= 100 ? 9 : 41, heads = 4, d = n == 7 ? 200 : 128, rows = seq * heads;
      Strided v(dtype, {seq, n, heads, d}, {n * heads * d, heads * d, d, 1});
      Strided s(DType::kF32, {seq, n, heads}, {n * heads, heads, 1});
      Strided vo(dtype, {seq, heads, d}, {heads * d, d, 1}),
          so(DType::kF32, {seq, heads}, {heads, 1});
      const std::vector<double> v_h = v.Upload(RandomNormal(seq * n * heads * d, rng));
      const std::vector<double> s_h = s.Upload(StackedLse(seq, n, heads, rng));
      const Status st = MergeStates(TestEngine(), v.View(), s.View(), vo.View(), so.View());
      INFO(st.ToString());
      REQUIRE(st.ok());
      Synchronize();
      if (DryRun()) continue;
      std::vector<double> v_in, s_in, v_ref, s_ref;
      ByRow(v_h, s_h, seq, n, heads, d, &v_in, &s_in);
      ref::MergeStates(v_in, s_in, rows, n, d, &v_ref, &s_ref);
      CheckOutputs(dtype, Logical(vo), Logical(so), v_ref, s_ref, v_in, n, rows, d,
                   fmt::format("merge_states {} n {} d {}", DTypeName(dtype), n, d));
    }

  // Two states of one [seq, 2, heads, d] tensor, the second merged into the first in place.
  const int64_t seq = 33, heads = 8, d = 128, rows = seq * heads;
  Strided v(DType::kBF16, {seq, 2, heads, d}, {2 * heads * d, heads * d, d, 1});
  Strided s(DType::kF32, {seq, 2, heads}, {2 * heads, heads, 1});
  const std::vector<double> v_h = v.Upload(RandomNormal(seq * 2 * heads * d, rng));
  const std::vector<double> s_h = s.Upload(StackedLse(seq, 2, heads, rng));
  auto state = [](const TensorView& t, int i) {
    TensorView r = t;
    r.ndim = t.ndim - 1;
    for (int k = 1; k < r.ndim; ++k) {
      r.shape[k] = t.shape[k + 1];
      r.strides[k] = t.strides[k + 1];
    }
    r.data = static_cast<char*>(t.data) + i * t.strides[1] * DTypeBytes(t.dtype);
    return r;
  };
  const Status st = MergeStateInPlace(TestEngine(), state(v.View(), 0), state(s.View(), 0),
                                      state(v.View(), 1), state(s.View(), 1), TensorView{});
  INFO(st.ToString());
  REQUIRE(st.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<double> v_in, s_in, v_ref, s_ref;
  ByRow(v_h, s_h, seq, 2, heads, d, &v_in, &s_in);
  ref::MergeStates(v_in, s_in, rows, 2, d, &v_ref, &s_ref);
  const std::vector<float> all_v = Logical(v), all_s = Logical(s);
  std::vector<float> v_got(rows * d), s_got(rows);
  int64_t second_touched = 0;
  for (int64_t q = 0; q < seq; ++q)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t r = q * heads + h;
      s_got[r] = all_s[(q * 2) * heads + h];
      const float s_before = static_cast<float>(s_h[(q * 2 + 1) * heads + h]);
      const float s_after = all_s[(q * 2 + 1) * heads + h];
      second_touched += !(s_after == s_before || (std::isnan(s_after) && std::isnan(s_before)));
      for (int64_t c = 0; c < d; ++c) {
        v_got[r * d + c] = all_v[((q * 2) * heads + h) * d + c];
        const float before = static_cast<float>(v_h[((q * 2 + 1) * heads + h) * d + c]);
        const float after = all_v[((q * 2 + 1) * heads + h) * d + c];
        second_touched += !(after == before || (std::isnan(after) && std::isnan(before)));
      }
    }
  CHECK(second_touched == 0);
  CheckOutputs(DType::kBF16, v_got, s_got, v_ref, s_ref, v_in, 2, rows, d, "interleaved in place");
}

}  // namespace
}  // namespace flashjit::test
