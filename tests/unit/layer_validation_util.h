// Shared by the layer-op validation tests: a dry-run engine, fake (never touched) tensors, and
// a matcher for "InvalidArgument naming `what`". Bad calls must fail before any launch, so
// nothing here is ever compiled or dereferenced.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <catch2/catch.hpp>

#include "tests/unit/test_util.h"

namespace flashjit::test {

inline Engine& DryEngine() {
  static std::shared_ptr<Engine> e = MakeTestEngine("", /*dry_run=*/true);
  return *e;
}

inline void* FakeData() {
  alignas(256) static char buf[256];
  return buf;
}

inline TensorView Fake(DType dtype, std::initializer_list<int64_t> shape) {
  return TensorView::Contiguous(FakeData(), dtype, shape);
}

#define CHECK_INVALID(expr, what)                                 \
  do {                                                            \
    const ::flashjit::Status _s = (expr);                         \
    INFO(_s.ToString());                                          \
    CHECK(_s.code() == ::flashjit::StatusCode::kInvalidArgument); \
    CHECK_THAT(_s.message(), Catch::Contains(what));              \
  } while (0)

}  // namespace flashjit::test
