#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "build_info.h"
#include "src/compile/compiler.h"

namespace flashjit::compile {

Result<std::string> FindCudaIncludeDir(const std::string& configured) {
  std::vector<std::string> candidates;
  if (!configured.empty()) {
    candidates.push_back(configured);
  } else {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* v = std::getenv(var); v && *v)
        candidates.push_back(std::string(v) + "/include");
    }
    candidates.push_back(FLASHJIT_CUDA_INCLUDE_DIR);
    candidates.push_back("/usr/local/cuda/include");
  }
  std::string tried;
  for (const std::string& dir : candidates) {
    std::error_code ec;
    if (std::filesystem::exists(dir + "/cuda_fp16.h", ec)) return dir;
    tried += (tried.empty() ? "" : ", ") + dir;
  }
  return Status::NotFound(fmt::format(
      "CUDA include directory not found (looked for cuda_fp16.h in: {}); set CUDA_HOME, "
      "FLASHJIT_CUDA_INCLUDE_DIR or EngineOptions::cuda_include_dir to the toolkit",
      tried));
}

}  // namespace flashjit::compile
