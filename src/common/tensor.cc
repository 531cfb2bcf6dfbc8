#include <flashjit/tensor.h>
#include <fmt/format.h>

namespace flashjit {

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kF8E4M3:
      return "e4m3";
    case DType::kF8E5M2:
      return "e5m2";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kU8:
      return "u8";
    case DType::kBool:
      return "bool";
  }
  return "?";
}

int DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kF8E4M3:
    case DType::kF8E5M2:
    case DType::kU8:
    case DType::kBool:
      return 1;
  }
  return 0;
}

Result<DType> ParseDType(std::string_view name) {
  for (DType d : {DType::kF16, DType::kBF16, DType::kF32, DType::kF8E4M3, DType::kF8E5M2,
                  DType::kI32, DType::kI64, DType::kU8, DType::kBool}) {
    if (DTypeName(d) == name) return d;
  }
  return Status::InvalidArgument(fmt::format(
      "unknown dtype '{}'; allowed: f16, bf16, f32, e4m3, e5m2, i32, i64, u8, bool", name));
}

TensorView TensorView::Contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                                  int device) {
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.device = device;
  t.ndim = static_cast<int>(shape.size());
  int i = 0;
  for (int64_t s : shape) t.shape[i++] = s;
  int64_t stride = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.shape[d];
  }
  return t;
}

// ndim comes from the caller (or DLPack) and may be anything: never index past kMaxDims.
static int ValidDims(int ndim) {
  return ndim < 0 ? 0 : (ndim > TensorView::kMaxDims ? TensorView::kMaxDims : ndim);
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int d = 0; d < ValidDims(ndim); ++d)
    if (__builtin_mul_overflow(n, shape[d], &n)) return INT64_MAX;  // saturate, never wrap
  return n;
}

bool TensorView::is_contiguous() const {
  int64_t stride = 1;
  for (int d = ValidDims(ndim) - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != stride) return false;
    if (__builtin_mul_overflow(stride, shape[d], &stride)) return false;
  }
  return true;
}

std::string TensorView::Describe() const {
  if (ndim != ValidDims(ndim))
    return fmt::format("(ndim {}, outside [0, {}]) {} on cuda:{}", ndim, int{kMaxDims},
                       DTypeName(dtype), device);
  std::string s = "[";
  for (int d = 0; d < ndim; ++d) s += fmt::format("{}{}", d ? ", " : "", shape[d]);
  s += fmt::format("] {} strides [", DTypeName(dtype));
  for (int d = 0; d < ndim; ++d) s += fmt::format("{}{}", d ? ", " : "", strides[d]);
  s += fmt::format("] on cuda:{}", device);
  return s;
}

}  // namespace flashjit
