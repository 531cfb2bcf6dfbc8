#include "tools/cli/kernel_table.h"

#include <fmt/format.h>

namespace flashjit::cli {

nlohmann::json KernelJson(const CachedKernel& k) {
  return {{"key", k.key},
          {"name", k.name},
          {"op", k.op},
          {"arch", k.arch},
          {"current", k.current},
          {"cubin_size", k.cubin_size},
          {"compile_ms", k.compile_ms},
          {"registers", k.registers},
          {"spill_bytes", k.spill_bytes},
          {"static_smem", k.static_smem},
          {"use_count", k.use_count},
          {"spec", k.spec}};
}

void PrintKernels(const std::vector<CachedKernel>& rows) {
  fmt::print("{:<16} {:<7} {:>8} {:>5} {:>6} {:>5}  {}\n", "key", "arch", "bytes", "regs", "ms",
             "uses", "name");
  for (const auto& k : rows)
    fmt::print("{:<16} {:<7} {:>8} {:>5} {:>6.0f} {:>5}  {}{}\n", k.key.substr(0, 16), k.arch,
               k.cubin_size, k.registers, k.compile_ms, k.use_count, k.name,
               k.current ? "" : "  (stale: other library/templates/NVRTC)");
}

}  // namespace flashjit::cli
