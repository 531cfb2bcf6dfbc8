// 16-byte global loads and stores with a chosen cache hint (the layer ops' streaming traffic).
//
// kHint (a spec field of the families that use it):
//   0  .cs: evict first in L1 and L2 (LoadVecStreaming / StoreVecStreaming, the default)
//   1  .L1::no_allocate with an L2 cache policy of evict_first (createpolicy, fraction 1.0)
//   2  the L2 policy of 1 alone (L1 as without a hint)
//   3  no hint (loads: ld.global, allocate in L1; stores: st.global, write back)
//   4  loads: as 1 with the L2 prefetch size 256B; stores: .L1::no_allocate (L2 normal)
//   5  .cs with the L2 policy of 1
// (sm_90 takes L2 eviction priorities only as a cache policy: .L2::evict_first on ld / st needs
// 32-byte accesses, sm_100.)
// Other sizes than 16 bytes fall back to the streaming forms of common/vec.cuh.
#pragma once

#include "common/vec.cuh"

namespace flashjit {

FLASHJIT_DEVICE uint64_t EvictFirstPolicy() {
  uint64_t policy;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

template <int kHint, class T, int N>
FLASHJIT_DEVICE Vec<T, N> LoadVecH(const T* p) {
  if constexpr (kHint == 0 || sizeof(Vec<T, N>) != 16) {
    return LoadVecStreaming<T, N>(p);
  } else {
    uint32_t a, b, c, d;
    if constexpr (kHint == 1) {
      asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                   : "l"(p), "l"(EvictFirstPolicy()));
    } else if constexpr (kHint == 2) {
      asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                   : "l"(p), "l"(EvictFirstPolicy()));
    } else if constexpr (kHint == 3) {
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                   : "l"(p));
    } else if constexpr (kHint == 4) {
      asm volatile(
          "ld.global.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
          : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
          : "l"(p), "l"(EvictFirstPolicy()));
    } else {
      asm volatile("ld.global.cs.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                   : "l"(p), "l"(EvictFirstPolicy()));
    }
    Vec<T, N> out;
    uint32_t* u = reinterpret_cast<uint32_t*>(&out);
    u[0] = a;
    u[1] = b;
    u[2] = c;
    u[3] = d;
    return out;
  }
}

template <int kHint, class T, int N>
FLASHJIT_DEVICE void StoreVecH(T* p, const Vec<T, N>& v) {
  if constexpr (kHint == 0 || sizeof(Vec<T, N>) != 16) {
    StoreVecStreaming(p, v);
  } else {
    const uint32_t* u = reinterpret_cast<const uint32_t*>(&v);
    if constexpr (kHint == 1) {
      asm volatile(
          "st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
          "r"(u[0]), "r"(u[1]), "r"(u[2]), "r"(u[3]), "l"(EvictFirstPolicy()));
    } else if constexpr (kHint == 2) {
      asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
                   "r"(u[0]), "r"(u[1]), "r"(u[2]), "r"(u[3]), "l"(EvictFirstPolicy()));
    } else if constexpr (kHint == 3) {
      asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u[0]), "r"(u[1]),
                   "r"(u[2]), "r"(u[3]));
    } else if constexpr (kHint == 4) {
      asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u[0]),
                   "r"(u[1]), "r"(u[2]), "r"(u[3]));
    } else {
      asm volatile("st.global.cs.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
                   "r"(u[0]), "r"(u[1]), "r"(u[2]), "r"(u[3]), "l"(EvictFirstPolicy()));
    }
  }
}

}  // namespace flashjit
