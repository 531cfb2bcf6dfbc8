#include <flashjit/device.h>

#include "src/runtime/driver.h"

namespace flashjit {

Result<int> CudaDriverVersion() { return runtime::DriverVersion(); }

Result<std::vector<GpuInfo>> ListGpus() {
  FLASHJIT_ASSIGN_OR_RETURN(int n, runtime::DeviceCount());
  std::vector<GpuInfo> out;
  for (int i = 0; i < n; ++i) {
    FLASHJIT_ASSIGN_OR_RETURN(runtime::DeviceInfo d, runtime::GetDeviceInfo(i));
    out.push_back({i, d.name, d.cc_major, d.cc_minor, d.sm_count, d.total_mem, d.arch()});
  }
  return out;
}

}  // namespace flashjit
