// Kernel: one loaded module (RAII) and its entry points on one device.
//
// Launch() is the hot path: it allocates nothing, takes no lock and touches no database.
#pragma once

#include <cuda.h>
#include <flashjit/status.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace flashjit::runtime {

struct LaunchConfig {
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;
  uint32_t block_x = 1, block_y = 1, block_z = 1;
  uint32_t dynamic_smem = 0;
  // Thread-block cluster shape (Hopper and later); 1x1x1 launches with cuLaunchKernel. Each
  // grid dimension must be a multiple of the cluster's.
  uint32_t cluster_x = 1, cluster_y = 1, cluster_z = 1;
  // Programmatic dependent launch (sm_90+): CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
  // so that the kernel may start before the previous kernel of the stream has finished. Only for
  // kernels that run griddepcontrol.wait before reading anything an earlier kernel writes.
  bool programmatic = false;
};

class Kernel {
 public:
  // Loads `cubin` into the primary context of `device` and resolves `symbols` (in entry order).
  static Result<std::unique_ptr<Kernel>> Load(const std::vector<uint8_t>& cubin,
                                              const std::vector<std::string>& symbols, int device,
                                              std::string name);
  // A kernel that was built but not loaded (engine dry run): Launch() does nothing.
  static std::unique_ptr<Kernel> Unloaded(size_t entries, int device, std::string name);
  ~Kernel();

  bool loaded() const { return module_ != nullptr; }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  int device() const { return device_; }
  const std::string& name() const { return name_; }
  int num_entries() const { return static_cast<int>(functions_.size()); }
  CUfunction function(int entry) const { return functions_[entry]; }
  // Registers per thread and static shared memory (bytes) of an entry, read once at load (0 for
  // unloaded kernels): launch-time grid choices read these instead of querying the driver.
  struct Resources {
    int registers = 0;
    int static_smem = 0;
  };
  const Resources& resources(int entry) const { return resources_[entry]; }

  // Launches entry `entry` on `stream` (a CUstream of this device's primary context, or null).
  // REQUIRES: `params` points to the entry's Params struct, entry < num_entries().
  Status Launch(int entry, const LaunchConfig& cfg, const void* params, CUstream stream) const;

 private:
  Kernel() = default;
  CUmodule module_ = nullptr;
  CUcontext context_ = nullptr;
  int device_ = 0;
  std::string name_;
  std::vector<CUfunction> functions_;
  std::vector<Resources> resources_;
  // Dynamic shared memory each function is currently allowed (raised on first need).
  std::unique_ptr<std::atomic<int>[]> smem_limit_;
};

}  // namespace flashjit::runtime
