// The Hopper bulk-copy engine (sm_90+): 1-D global -> shared copies completed on an mbarrier
// (cp.async.bulk ... mbarrier::complete_tx::bytes), and the mbarrier operations they need. Each
// wrapper is named after its PTX instruction; on older targets they trap (the host only picks a
// bulk-copy variant on sm_90+).
#pragma once

#include "attention/mma_sm80.cuh"
#include "common/cluster_sm90.cuh"

namespace flashjit::attention {

// mbarrier.init: `count` arrivals complete a phase (shared memory, 8-byte aligned).
FLASHJIT_DEVICE void MbarrierInit(uint64_t* bar, uint32_t count) {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(SmemAddress(bar)), "r"(count)
               : "memory");
#else
  __trap();
#endif
}

// Makes the mbarrier initialisations of this thread visible to the async proxy (the bulk-copy
// engine) and, after a barrier, to the other threads.
FLASHJIT_DEVICE void FenceMbarrierInit() {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
  __trap();
#endif
}

// mbarrier.arrive.expect_tx: one arrival, and `bytes` more bytes of transactions expected in
// the current phase.
FLASHJIT_DEVICE void MbarrierArriveExpectTx(uint64_t* bar, uint32_t bytes) {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(SmemAddress(bar)),
               "r"(bytes)
               : "memory");
#else
  __trap();
#endif
}

// Waits until the phase with parity `parity` of `bar` has completed (try_wait in a loop).
FLASHJIT_DEVICE void MbarrierWaitParity(uint64_t* bar, uint32_t parity) {
#if FLASHJIT_CLUSTER_PTX
  const uint32_t addr = SmemAddress(bar);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
#else
  __trap();
#endif
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes: copies `bytes` (a multiple
// of 16; both addresses 16-byte aligned) from global `src` into this CTA's shared `dst`; the
// bytes count as transactions on `bar` when they land.
FLASHJIT_DEVICE void CpAsyncBulkG2S(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#if FLASHJIT_CLUSTER_PTX
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(SmemAddress(dst)),
      "l"(src), "r"(bytes), "r"(SmemAddress(bar))
      : "memory");
#else
  __trap();
#endif
}

}  // namespace flashjit::attention
