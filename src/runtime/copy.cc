#include "src/runtime/copy.h"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "src/runtime/driver.h"

namespace flashjit::runtime {

Status CopyToDeviceAsync(const Engine& engine, void* dst, const void* src, size_t bytes,
                         CUstream stream) {
  if (engine.config().dry_run || bytes == 0) return Status::Ok();
  FLASHJIT_ASSIGN_OR_RETURN(const DriverApi* d, Driver());
  FLASHJIT_CU(d, cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, stream),
              fmt::format("cuMemcpyHtoDAsync({} bytes of a plan)", bytes));
  return Status::Ok();
}

Result<int> MultiprocessorCount(const Engine& engine, int device) {
  if (engine.config().dry_run) return 132;
  static std::mutex mu;
  static std::unordered_map<int, int> counts;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = counts.find(device); it != counts.end()) return it->second;
  FLASHJIT_ASSIGN_OR_RETURN(DeviceInfo info, GetDeviceInfo(device));
  counts[device] = info.sm_count;
  return info.sm_count;
}

}  // namespace flashjit::runtime
