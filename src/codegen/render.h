// Renders one variant into one CUDA translation unit: the Variant struct, an include of the
// family's header, and one extern "C" __global__ entry per family entry point.
//
// Deterministic: the same canonical spec gives the same bytes.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/status.h>

#include <string>

namespace flashjit::codegen {

Result<std::string> Render(const VariantSpec& spec);

}  // namespace flashjit::codegen
