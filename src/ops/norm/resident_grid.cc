#include "src/ops/norm/resident_grid.h"

#include <algorithm>
#include <atomic>

#include "src/runtime/driver.h"
#include "src/runtime/occupancy.h"

namespace flashjit::ops {
namespace {

constexpr int kMaxDevices = 64;
std::atomic<int> g_sm_count[kMaxDevices];  // 0 = not queried yet

int SmCount(int device) {
  if (device < 0 || device >= kMaxDevices) return 0;
  int n = g_sm_count[device].load(std::memory_order_relaxed);
  if (n == 0) {
    auto info = runtime::GetDeviceInfo(device);
    n = info.ok() ? info->sm_count : -1;
    g_sm_count[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

}  // namespace

uint32_t ResidentGrid(const runtime::Kernel& kernel, int entry, int block_threads, int64_t work,
                      int dynamic_smem) {
  const int64_t cap = std::min<int64_t>(work, 0x7fffffff);
  if (!kernel.loaded() || block_threads <= 0) return static_cast<uint32_t>(cap);
  const int sms = SmCount(kernel.device());
  if (sms <= 0) return static_cast<uint32_t>(cap);
  const int smem = kernel.resources(entry).static_smem + std::max(dynamic_smem, 0);
  const int per_sm =
      runtime::ResidentBlocksPerSm(kernel.resources(entry).registers, block_threads, smem);
  const int64_t resident = static_cast<int64_t>(per_sm) * sms;
  if (work <= resident) return static_cast<uint32_t>(cap);
  const int64_t per_block = (work + resident - 1) / resident;
  return static_cast<uint32_t>(std::min<int64_t>((work + per_block - 1) / per_block, cap));
}

}  // namespace flashjit::ops
