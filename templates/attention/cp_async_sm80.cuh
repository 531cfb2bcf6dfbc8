// Asynchronous global -> shared copies of sm_80 and later (cp.async), 16 bytes at a time.
#pragma once

#include "attention/mma_sm80.cuh"

namespace flashjit::attention {

// Copies 16 bytes from `src` to `dst` (shared), or writes 16 zero bytes when !valid (src is then
// not read, but must still be a mapped address).
FLASHJIT_DEVICE void CpAsync16(void* dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SmemAddress(dst)), "l"(src),
               "r"(src_bytes));
}

// An L2 cache policy that marks the lines it touches first to be evicted (for data read once):
// the value `createpolicy.fractional.L2::evict_first.b64 p, 1.0` produces (CUTLASS's
// CacheHintSm90::EVICT_FIRST), as a constant. The createpolicy instruction itself is not used:
// NVRTC 13.0's ptxas drops it and leaves the cp.async's descriptor register unset (illegal
// instruction on the H200, session 10 call 1; also reported against CUDA 13.1 by Marlin).
FLASHJIT_DEVICE uint64_t L2EvictFirstPolicy() { return 0x12F0000000000000ull; }

// CpAsync16 with an L2 cache policy (L2EvictFirstPolicy).
FLASHJIT_DEVICE void CpAsync16(void* dst, const void* src, bool valid, uint64_t policy) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile(
      "cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(SmemAddress(dst)),
      "l"(src), "r"(src_bytes), "l"(policy));
}

FLASHJIT_DEVICE void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `kPending` committed groups of this thread are still in flight.
template <int kPending>
FLASHJIT_DEVICE void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace flashjit::attention
