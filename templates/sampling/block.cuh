// Block-wide reductions and scans the sampling kernels need beyond common/reduce.cuh.
// Every function is called by all threads of the block; every thread gets the result.
#pragma once

#include "common/cluster_sm90.cuh"
#include "common/reduce.cuh"
#include "sampling/sampling_params.cuh"

namespace flashjit::sampling {

// Scratch for one block operation: 32 slots of 8 bytes.
struct BlockScratch {
  double d[32];
};

template <int kThreads, class T, class Op>
FLASHJIT_DEVICE T BlockReduce(T x, BlockScratch& s, Op op) {
  constexpr int kWarps = kThreads / 32;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
  if constexpr (kWarps == 1) {
    return x;
  } else {
    T* slots = reinterpret_cast<T*>(s.d);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) slots[warp] = x;
    __syncthreads();
    // Lanes past the last warp repeat slot 0 (harmless for min/max) or add nothing.
    x = lane < kWarps ? slots[lane] : (Op::kIdempotent ? slots[0] : T(0));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
  }
}

struct OpAdd {
  static constexpr bool kIdempotent = false;
  template <class T>
  FLASHJIT_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};
struct OpMax {
  static constexpr bool kIdempotent = true;
  template <class T>
  FLASHJIT_DEVICE T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
struct OpMin {
  static constexpr bool kIdempotent = true;
  template <class T>
  FLASHJIT_DEVICE T operator()(T a, T b) const {
    return a < b ? a : b;
  }
};

// Inclusive prefix sum over threads in threadIdx order; *total receives the block sum.
template <int kThreads, class T>
FLASHJIT_DEVICE T BlockInclusiveScan(T x, BlockScratch& s, T* total) {
  constexpr int kWarps = kThreads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    T y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if constexpr (kWarps == 1) {
    *total = __shfl_sync(0xffffffffu, x, 31);
    return x;
  } else {
    T* slots = reinterpret_cast<T*>(s.d);
    __syncthreads();
    if (lane == 31) slots[warp] = x;
    __syncthreads();
    T w = lane < kWarps ? slots[lane] : T(0);
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      T y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    // w (lane i) = sum of warps 0..i
    const T before = warp > 0 ? __shfl_sync(0xffffffffu, w, warp - 1) : T(0);
    *total = __shfl_sync(0xffffffffu, w, kWarps - 1);
    return x + before;
  }
}

// mapa (generic): the generic address of `p` (this block's shared memory) in block `rank` of the
// cluster. Plain loads through it read that block's shared memory and are scheduled like any
// load (several in flight); the cluster barriers (asm volatile with a memory clobber) order them.
template <class T>
FLASHJIT_DEVICE const T* MapaGeneric(const T* p, uint32_t rank) {
#if FLASHJIT_CLUSTER_PTX
  uint64_t r;
  asm("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(reinterpret_cast<uint64_t>(p)), "r"(rank));
  return reinterpret_cast<const T*>(r);
#else
  __trap();
  return p;
#endif
}

// Phase stamps (benchmarks: V::kStamps): thread 0 of the block writes the SM's cycle counter
// into slot `slot` of its block's kStampSlots (sampling_params.cuh). Compiled out otherwise.
template <class V>
FLASHJIT_DEVICE void Stamp(uint64_t* stamps, int slot) {
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0 && stamps != nullptr)
      stamps[static_cast<int64_t>(blockIdx.x) * kStampSlots + slot] = clock64();
  }
}

template <class V>
FLASHJIT_DEVICE void StampTimer(uint64_t* stamps, int slot) {
  if constexpr (V::kStamps) {
    if (threadIdx.x == 0 && stamps != nullptr) {
      uint64_t t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      stamps[static_cast<int64_t>(blockIdx.x) * kStampSlots + slot] = t;
    }
  }
}

// Values one block publishes to the other blocks of its cluster.
struct ClusterSlots {
  double v[4];
};

// Every warp of every block of the cluster gets, in lane j < kCluster, the value x[i] of the
// block of rank j (0 in the other lanes). x must be the same in every thread of a block.
// kCluster == 1: lane 0 holds x, no synchronisation.
template <int kCluster, int N>
FLASHJIT_DEVICE void ClusterGather(const double (&x)[N], double (&lanes)[N], ClusterSlots& cs) {
  static_assert(N <= 4 && kCluster <= 32, "ClusterGather: at most 4 values, 32 blocks");
  const int lane = threadIdx.x % 32;
  if constexpr (kCluster == 1) {
#pragma unroll
    for (int i = 0; i < N; ++i) lanes[i] = lane == 0 ? x[i] : 0.0;
  } else {
    if (threadIdx.x == 0)
#pragma unroll
      for (int i = 0; i < N; ++i) cs.v[i] = x[i];
    ClusterSync();
#pragma unroll
    for (int i = 0; i < N; ++i)
      lanes[i] = lane < kCluster
                     ? LdSharedClusterF64(MapaSharedCluster(&cs.v[i], static_cast<uint32_t>(lane)))
                     : 0.0;
    ClusterSync();  // every block has read the slots before any block writes them again
  }
}

// x[i] becomes the sum (bit i of max_mask clear) or the max (set) of x[i] over the cluster's
// blocks. A butterfly over one warp: the same bits in every thread of every block.
template <int kCluster, int N>
FLASHJIT_DEVICE void ClusterAllReduce(double (&x)[N], uint32_t max_mask, ClusterSlots& cs) {
  if constexpr (kCluster > 1) {
    double lanes[N];
    ClusterGather<kCluster, N>(x, lanes, cs);
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const bool is_max = (max_mask >> i) & 1u;
      double y =
          lane < kCluster ? lanes[i] : (is_max ? -__longlong_as_double(0x7ff0000000000000LL) : 0.0);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        const double z = __shfl_xor_sync(0xffffffffu, y, o);
        y = is_max ? (z > y ? z : y) : y + z;
      }
      x[i] = y;
    }
  }
}

}  // namespace flashjit::sampling
