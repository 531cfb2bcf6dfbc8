// What the CUDA driver reports about this machine. Every call returns kNoDriver on machines
// without a driver; none of them throws or aborts.
#pragma once

#include <flashjit/export.h>
#include <flashjit/status.h>

#include <string>
#include <vector>

namespace flashjit {

struct FLASHJIT_API GpuInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t total_mem = 0;
  std::string arch;  // what flashjit compiles for on it, e.g. "sm_90a"
};

// The driver's CUDA version, e.g. 13000.
FLASHJIT_API Result<int> CudaDriverVersion();
FLASHJIT_API Result<std::vector<GpuInfo>> ListGpus();

}  // namespace flashjit
