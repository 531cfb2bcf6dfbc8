// A non-owning view of a tensor in device memory, and the dtypes flashjit understands.
//
// Strides are in elements, not bytes (as DLPack and PyTorch). A view never owns or frees memory;
// the caller keeps the memory alive for as long as any launch that uses it may run.
#pragma once

#include <flashjit/export.h>
#include <flashjit/status.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace flashjit {

enum class DType : uint8_t {
  kF16 = 0,
  kBF16 = 1,
  kF32 = 2,
  kF8E4M3 = 3,
  kF8E5M2 = 4,
  kI32 = 5,
  kI64 = 6,
  kU8 = 7,
  kBool = 8,
};

FLASHJIT_API std::string_view DTypeName(DType dtype);  // "f16", "bf16", "f32", "e4m3", ...
FLASHJIT_API int DTypeBytes(DType dtype);
// Parses the names DTypeName returns.
FLASHJIT_API Result<DType> ParseDType(std::string_view name);

struct FLASHJIT_API TensorView {
  static constexpr int kMaxDims = 6;

  void* data = nullptr;
  DType dtype = DType::kF32;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};  // in elements
  int device = 0;                  // CUDA device ordinal

  // A contiguous (row-major) view.
  static TensorView Contiguous(void* data, DType dtype, std::initializer_list<int64_t> shape,
                               int device = 0);

  int64_t numel() const;
  int64_t size(int dim) const { return shape[dim < 0 ? dim + ndim : dim]; }
  int64_t stride(int dim) const { return strides[dim < 0 ? dim + ndim : dim]; }
  bool is_contiguous() const;
  // "[8, 4096] bf16 strides [4096, 1] on cuda:0"
  std::string Describe() const;
};

}  // namespace flashjit
