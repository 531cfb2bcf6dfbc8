// The op entry points fuzz_op_args exercises. To cover a new op, add one OpCase in
// fuzz_op_cases.cc: it draws its tensors and scalars from the provider and calls the public entry.
#pragma once

#include <flashjit/engine.h>
#include <flashjit/tensor.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <vector>

namespace flashjit::fuzz {

struct OpCase {
  const char* name;
  Status (*run)(Engine& engine, FuzzedDataProvider& in);
};

const std::vector<OpCase>& OpCases();

// A view with every field drawn from `in`: any dtype byte, ndim in [-1, 8], shapes and strides
// anywhere in int64 (biased towards small values), any pointer and device.
TensorView DrawTensor(FuzzedDataProvider& in);
float DrawFloat(FuzzedDataProvider& in);

}  // namespace flashjit::fuzz
