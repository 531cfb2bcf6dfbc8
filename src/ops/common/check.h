// Argument checks shared by every op. Each returns InvalidArgument naming the argument, what
// was wrong and what is allowed; ops run all checks before any launch.
#pragma once

#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <initializer_list>
#include <string_view>

namespace flashjit::ops {

// t.data non-null (unless empty), ndim == `ndim`, dtype one of `dtypes`, sizes >= 0.
Status CheckTensor(const TensorView& t, std::string_view name, int ndim,
                   std::initializer_list<DType> dtypes);
// Same dtype as `ref`.
Status CheckSameDType(const TensorView& t, std::string_view name, const TensorView& ref,
                      std::string_view ref_name);
// t.shape[dim] == expected.
Status CheckDim(const TensorView& t, std::string_view name, int dim, int64_t expected,
                std::string_view what);
// Same shape as `ref`.
Status CheckSameShape(const TensorView& t, std::string_view name, const TensorView& ref,
                      std::string_view ref_name);
// Innermost stride is 1 (rows may be strided).
Status CheckInnerContiguous(const TensorView& t, std::string_view name);
Status CheckContiguous(const TensorView& t, std::string_view name);
// Same device as `ref`.
Status CheckSameDevice(const TensorView& t, std::string_view name, const TensorView& ref,
                       std::string_view ref_name);
// a and b share no byte; with `allow_identical`, a may also be b itself (same data, dtype,
// shape and strides), as an in-place output is.
Status CheckNoOverlap(const TensorView& a, std::string_view a_name, const TensorView& b,
                      std::string_view b_name, bool allow_identical = false);
// No two elements of t share an address (an output a kernel writes in parallel).
Status CheckDistinctElements(const TensorView& t, std::string_view name);
// A finite float satisfying lo < x (strict) when `strict_lower`.
Status CheckPositive(float x, std::string_view name);

// Largest n in {8, 4, 2, 1} elements (n * elem_bytes <= 16) such that every pointer is aligned
// to n elements and every stride and `inner` are multiples of n.
int VectorWidth(int elem_bytes, int64_t inner, std::initializer_list<const void*> pointers,
                std::initializer_list<int64_t> strides);

// FNV-1a of an op name at compile time: the family id inside FastKey.
constexpr uint32_t FamilyId(std::string_view op) {
  uint32_t h = 2166136261u;
  for (char c : op) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

}  // namespace flashjit::ops
