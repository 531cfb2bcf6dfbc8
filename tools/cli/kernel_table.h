// Printing cached kernels for `cache ls` and `bundle inspect`.
#pragma once

#include <flashjit/engine.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace flashjit::cli {

nlohmann::json KernelJson(const CachedKernel& k);
void PrintKernels(const std::vector<CachedKernel>& rows);

}  // namespace flashjit::cli
