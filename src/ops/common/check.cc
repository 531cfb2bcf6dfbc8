#include "src/ops/common/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace flashjit::ops {

Status CheckTensor(const TensorView& t, std::string_view name, int ndim,
                   std::initializer_list<DType> dtypes) {
  if (t.ndim != ndim)
    return Status::InvalidArgument(
        fmt::format("{}: expected {} dimensions, got {} ({})", name, ndim, t.ndim, t.Describe()));
  if (std::find(dtypes.begin(), dtypes.end(), t.dtype) == dtypes.end()) {
    // The list of allowed dtypes is only spelled out on the error path (no allocation on the
    // launch path).
    std::string allowed;
    for (DType d : dtypes)
      allowed += fmt::format("{}{}", allowed.empty() ? "" : ", ", DTypeName(d));
    return Status::InvalidArgument(
        fmt::format("{}: dtype {} not supported; allowed: {}", name, DTypeName(t.dtype), allowed));
  }
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0)
      return Status::InvalidArgument(
          fmt::format("{}: negative size in dim {} ({})", name, d, t.Describe()));
  }
  // Sizes and strides come from the caller: the element count and the span the view covers
  // must fit in 64 bits before anything computes with them.
  int64_t count = 1, span = DTypeBytes(t.dtype);
  for (int d = 0; d < t.ndim; ++d) {
    const int64_t reach = t.shape[d] == 0 ? 0 : t.shape[d] - 1;
    const int64_t stride = t.strides[d] == INT64_MIN ? INT64_MAX : std::llabs(t.strides[d]);
    int64_t step = 0;
    if (__builtin_mul_overflow(count, t.shape[d], &count) ||
        __builtin_mul_overflow(reach, stride, &step) ||
        __builtin_mul_overflow(step, int64_t{DTypeBytes(t.dtype)}, &step) ||
        __builtin_add_overflow(span, step, &span))
      return Status::InvalidArgument(
          fmt::format("{}: sizes and strides overflow 64-bit element or byte offsets ({})", name,
                      t.Describe()));
  }
  if (!t.data && t.numel() > 0)
    return Status::InvalidArgument(fmt::format("{}: null data pointer for {}", name, t.Describe()));
  if (t.device < 0)
    return Status::InvalidArgument(
        fmt::format("{}: device {} is not a CUDA device", name, t.device));
  return Status::Ok();
}

Status CheckSameDType(const TensorView& t, std::string_view name, const TensorView& ref,
                      std::string_view ref_name) {
  if (t.dtype != ref.dtype)
    return Status::InvalidArgument(fmt::format("{}: dtype {} must equal {}'s dtype {}", name,
                                               DTypeName(t.dtype), ref_name, DTypeName(ref.dtype)));
  return Status::Ok();
}

Status CheckDim(const TensorView& t, std::string_view name, int dim, int64_t expected,
                std::string_view what) {
  if (t.shape[dim] != expected)
    return Status::InvalidArgument(fmt::format("{}: dim {} is {}, expected {} ({}); {}", name, dim,
                                               t.shape[dim], expected, what, t.Describe()));
  return Status::Ok();
}

Status CheckSameShape(const TensorView& t, std::string_view name, const TensorView& ref,
                      std::string_view ref_name) {
  bool same = t.ndim == ref.ndim;
  for (int d = 0; same && d < t.ndim; ++d) same = t.shape[d] == ref.shape[d];
  if (!same)
    return Status::InvalidArgument(fmt::format("{}: shape {} must equal {}'s shape {}", name,
                                               t.Describe(), ref_name, ref.Describe()));
  return Status::Ok();
}

Status CheckInnerContiguous(const TensorView& t, std::string_view name) {
  if (t.ndim > 0 && t.shape[t.ndim - 1] > 1 && t.strides[t.ndim - 1] != 1)
    return Status::InvalidArgument(
        fmt::format("{}: innermost dimension must have stride 1 ({})", name, t.Describe()));
  return Status::Ok();
}

Status CheckContiguous(const TensorView& t, std::string_view name) {
  if (!t.is_contiguous())
    return Status::InvalidArgument(fmt::format("{}: must be contiguous ({})", name, t.Describe()));
  return Status::Ok();
}

Status CheckSameDevice(const TensorView& t, std::string_view name, const TensorView& ref,
                       std::string_view ref_name) {
  if (t.device != ref.device)
    return Status::InvalidArgument(
        fmt::format("{}: on cuda:{}, but {} is on cuda:{}", name, t.device, ref_name, ref.device));
  return Status::Ok();
}

namespace {

// [lo, hi): the bytes a (non-empty) view covers.
std::pair<uintptr_t, uintptr_t> ByteRange(const TensorView& t) {
  const int64_t elem = DTypeBytes(t.dtype);
  int64_t lo = 0, hi = elem;
  for (int d = 0; d < t.ndim; ++d) {
    const int64_t reach = (t.shape[d] - 1) * t.strides[d] * elem;
    (reach < 0 ? lo : hi) += reach;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
  return {base + lo, base + hi};
}

// The dims of more than one element, by increasing |stride|, into order; returns their count.
int DimsByStride(const TensorView& t, int* order) {
  int n = 0;
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] > 1) order[n++] = d;
  std::sort(order, order + n,
            [&](int x, int y) { return std::llabs(t.strides[x]) < std::llabs(t.strides[y]); });
  return n;
}

// Whether delta (in elements) is sum_d k_d * |stride_d| over the dims order[0..n) (decreasing
// |stride|) with |k_d| < shape[d]. Each |stride| exceeds what the smaller ones reach (distinct
// elements), so k_d can only be the floor or the ceiling of delta / |stride_d|.
bool Reachable(const TensorView& t, const int* order, int n, int64_t delta) {
  if (n == 0) return delta == 0;
  const int64_t s = std::llabs(t.strides[order[0]]);
  const int64_t q = delta / s - (delta % s != 0 && delta < 0 ? 1 : 0);  // floor
  for (int64_t k : {q, q + 1})
    if (std::llabs(k) < t.shape[order[0]] && Reachable(t, order + 1, n - 1, delta - k * s))
      return true;
  return false;
}

bool SameView(const TensorView& a, const TensorView& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d] || (a.shape[d] > 1 && a.strides[d] != b.strides[d])) return false;
  return true;
}

// Two views of one dtype and the same strides (e.g. two states of a stacked [seq, 2, heads, d]
// tensor) share an element iff b.data - a.data is a difference of two index vectors' offsets:
// decided on their union view (per dim the larger shape), when its elements are distinct.
// Returns -1 when this exact test does not apply.
int SharesElement(const TensorView& a, const TensorView& b) {
  if (a.dtype != b.dtype || a.ndim != b.ndim) return -1;
  TensorView u = a;
  for (int d = 0; d < a.ndim; ++d) {
    if ((a.shape[d] > 1 || b.shape[d] > 1) && a.strides[d] != b.strides[d]) return -1;
    u.shape[d] = std::max(a.shape[d], b.shape[d]);
  }
  const int64_t elem = DTypeBytes(a.dtype);
  const int64_t diff = static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.data) -
                                            reinterpret_cast<uintptr_t>(a.data));
  if (diff % elem != 0 || !CheckDistinctElements(u, "").ok()) return -1;
  int order[TensorView::kMaxDims];
  const int n = DimsByStride(u, order);
  std::reverse(order, order + n);
  return Reachable(u, order, n, diff / elem) ? 1 : 0;
}

}  // namespace

Status CheckNoOverlap(const TensorView& a, std::string_view a_name, const TensorView& b,
                      std::string_view b_name, bool allow_identical) {
  if (a.data == nullptr || b.data == nullptr || a.numel() == 0 || b.numel() == 0)
    return Status::Ok();
  if (allow_identical && SameView(a, b)) return Status::Ok();
  const auto [a_lo, a_hi] = ByteRange(a);
  const auto [b_lo, b_hi] = ByteRange(b);
  // Overlapping ranges may still be interleaved views with no element in common.
  if (a_lo < b_hi && b_lo < a_hi && SharesElement(a, b) != 0)
    return Status::InvalidArgument(
        fmt::format("{}: shares memory with {} ({} and {}){}", a_name, b_name, a.Describe(),
                    b.Describe(), allow_identical ? "; it may only be that tensor itself" : ""));
  return Status::Ok();
}

Status CheckDistinctElements(const TensorView& t, std::string_view name) {
  // By increasing |stride|, each stride must step over everything the smaller ones reach.
  int order[TensorView::kMaxDims];
  const int n = DimsByStride(t, order);
  int64_t reach = 1;  // one past the largest offset the dims so far reach
  for (int i = 0; i < n; ++i) {
    const int64_t stride = std::llabs(t.strides[order[i]]);
    if (stride < reach)
      return Status::InvalidArgument(
          fmt::format("{}: elements overlap in memory (dim {} has stride {}); an output needs "
                      "distinct elements ({})",
                      name, order[i], t.strides[order[i]], t.Describe()));
    reach += stride * (t.shape[order[i]] - 1);
  }
  return Status::Ok();
}

Status CheckPositive(float x, std::string_view name) {
  if (!(x > 0.f) || !std::isfinite(x))
    return Status::InvalidArgument(fmt::format("{}: must be a finite number > 0, got {}", name, x));
  return Status::Ok();
}

int VectorWidth(int elem_bytes, int64_t inner, std::initializer_list<const void*> pointers,
                std::initializer_list<int64_t> strides) {
  for (int n = 16 / elem_bytes; n > 1; n /= 2) {
    bool ok = inner % n == 0;
    for (const void* p : pointers)
      ok = ok && reinterpret_cast<uintptr_t>(p) % (n * elem_bytes) == 0;
    for (int64_t s : strides) ok = ok && s % n == 0;
    if (ok) return n;
  }
  return 1;
}

}  // namespace flashjit::ops
