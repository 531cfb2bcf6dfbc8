// Thread-block clusters (sm_90+): rank, cluster barrier and distributed shared memory loads.
// Each wrapper is named after its PTX instruction; on older targets they trap (a host that
// launches a cluster variant there has a bug: the chooser only picks clusters on sm_90+).
//
// A kernel that reads another block's shared memory must keep that block alive: every access
// to a remote block's shared memory happens before a ClusterSync that the remote block also
// waits on.
#pragma once

#include "common/config.cuh"

namespace flashjit {

#if FLASHJIT_HAS_DEVICE

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FLASHJIT_CLUSTER_PTX 1
#else
#define FLASHJIT_CLUSTER_PTX 0
#endif

// %cluster_ctarank: this block's rank in its cluster.
FLASHJIT_DEVICE uint32_t ClusterCtaRank() {
#if FLASHJIT_CLUSTER_PTX
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

// barrier.cluster.arrive.release + wait.acquire: every thread of every block of the cluster
// arrives; shared-memory writes before it are visible to every block after it.
FLASHJIT_DEVICE void ClusterSync() {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;"
               :
               :
               : "memory");
#else
  __trap();
#endif
}

// barrier.cluster.arrive (release / relaxed) and wait.acquire apart, for work between them that
// runs while the other blocks arrive. Every thread arrives once before it waits. The relaxed
// arrive orders no memory: only for a barrier that keeps blocks alive, after every distributed
// load before it has returned its value.
FLASHJIT_DEVICE void ClusterArriveRelease() {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("barrier.cluster.arrive.release.aligned;" : : : "memory");
#else
  __trap();
#endif
}

FLASHJIT_DEVICE void ClusterArriveRelaxed() {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" : : : "memory");
#else
  __trap();
#endif
}

FLASHJIT_DEVICE void ClusterWaitAcquire() {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("barrier.cluster.wait.acquire.aligned;" : : : "memory");
#else
  __trap();
#endif
}

// mapa.shared::cluster: the address of `p` (this block's shared memory) in block `rank`.
FLASHJIT_DEVICE uint32_t MapaSharedCluster(const void* p, uint32_t rank) {
#if FLASHJIT_CLUSTER_PTX
  const uint32_t local = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
#else
  __trap();
  return 0;
#endif
}

// ld.shared::cluster of 32 / 64 bits at a cluster shared-memory address.
FLASHJIT_DEVICE uint32_t LdSharedClusterU32(uint32_t addr) {
#if FLASHJIT_CLUSTER_PTX
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
#else
  __trap();
  return 0;
#endif
}

FLASHJIT_DEVICE double LdSharedClusterF64(uint32_t addr) {
#if FLASHJIT_CLUSTER_PTX
  double v;
  asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(addr) : "memory");
  return v;
#else
  __trap();
  return 0;
#endif
}

// st.shared::cluster of 32 bits at a cluster shared-memory address.
FLASHJIT_DEVICE void StSharedClusterU32(uint32_t addr, uint32_t v) {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("st.shared::cluster.u32 [%0], %1;" : : "r"(addr), "r"(v) : "memory");
#else
  __trap();
#endif
}

// red.shared::cluster.add.u32 at a cluster shared-memory address (MapaSharedCluster): fire and
// forget; the next cluster barrier's release / acquire makes the sums visible.
FLASHJIT_DEVICE void RedSharedClusterAdd(uint32_t addr, uint32_t v) {
#if FLASHJIT_CLUSTER_PTX
  asm volatile("red.shared::cluster.add.u32 [%0], %1;" : : "r"(addr), "r"(v) : "memory");
#else
  __trap();
#endif
}

#endif  // FLASHJIT_HAS_DEVICE

}  // namespace flashjit
