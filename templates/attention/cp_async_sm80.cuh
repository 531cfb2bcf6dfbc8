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

FLASHJIT_DEVICE void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `kPending` committed groups of this thread are still in flight.
template <int kPending>
FLASHJIT_DEVICE void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace flashjit::attention
