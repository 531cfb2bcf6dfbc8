#include "src/runtime/occupancy.h"

#include <algorithm>

namespace flashjit::runtime {

int ResidentBlocksPerSm(int registers, int block_threads, int smem_bytes) {
  constexpr int kRegisters = 65536, kThreads = 2048, kBlocks = 32;
  constexpr int kSmem = 228 * 1024, kSmemReserved = 1024;
  const int warps = (std::max(block_threads, 1) + 31) / 32;
  const int regs_per_warp = (std::max(registers, 1) * 32 + 255) / 256 * 256;
  const int by_regs = kRegisters / (regs_per_warp * warps);
  const int by_threads = kThreads / (warps * 32);
  const int by_smem = kSmem / (std::max(smem_bytes, 0) + kSmemReserved);
  return std::max(1, std::min({by_regs, by_threads, by_smem, kBlocks}));
}

}  // namespace flashjit::runtime
