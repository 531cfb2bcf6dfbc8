#include "src/ops/common/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

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
