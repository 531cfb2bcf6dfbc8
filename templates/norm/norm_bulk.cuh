// RMSNorm through the Hopper bulk-copy engine (sm_90): whole rows move between global and shared
// memory with 1-D `cp.async.bulk` (no tensor map), the threads only read and write shared memory.
//
// A resident grid; each block walks rows g = blockIdx.x, + gridDim.x, ... through kStages
// row buffers in dynamic shared memory (kStages * row_bytes rounded up to 128 B). Thread 0 issues
// the loads (completing on one mbarrier per buffer, expect_tx = row bytes) and the stores (bulk
// groups). Per row: every thread waits on the buffer's mbarrier, reads its share of the row
// (16-byte accesses, conflict-free), the block reduces the sum of squares, each thread reads its
// share again and writes it normalised back into the same buffer, fence.proxy.async makes those
// writes visible to the bulk engine, a barrier, and thread 0 stores the buffer as one bulk copy.
// The buffer is refilled with row k + kStages once the store has read it (wait_group.read): with
// kStages >= 3 the refill waits one row (the store of row k - 1), so that thread 0 does not stall
// on the store it has just issued.
//
// kStages == 1: the host launches one block per row (a full grid, blocks scheduled in waves like
// norm_one_pass.cuh); the loop then runs once.
//
// kBulk == 2 is a pure copy through the same machinery (out = x, only thread 0 works): the
// engine's own ceiling for this traffic, timed beside the kernel by the benchmark.
//
// kStreaming: the bulk copies carry an evict-first L2 policy (createpolicy), like the ordinary
// kernel's ld/st.global.cs.
//
// REQUIRES (checked on the host): x, out and their row strides 16-byte aligned, row bytes a
// multiple of 16, hidden <= kThreads * kItems * kVec, kVec * sizeof(T) == 16, rows 2-D
// (heads == 1), kind rms, one row per block.
#pragma once

#include "common/vec.cuh"
#include "norm/norm_params.cuh"
#include "norm/norm_row.cuh"
#include "norm/row_sum.cuh"

namespace flashjit::norm {

FLASHJIT_DEVICE uint32_t BulkSmem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

FLASHJIT_DEVICE void BulkBarrierInit(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(BulkSmem(bar)));
}

// An L2 policy that evicts the line first (the bulk copies' form of ld/st.global.cs).
FLASHJIT_DEVICE uint64_t BulkEvictFirst() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// Thread 0: arrive on `bar` expecting `bytes`, then load them global -> shared on it; with
// kHint under L2 policy `policy`.
template <bool kHint>
FLASHJIT_DEVICE void BulkLoad(void* dst, const void* src, uint32_t bytes, uint64_t* bar,
                              uint64_t policy) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(BulkSmem(bar)),
               "r"(bytes)
               : "memory");
  if constexpr (kHint) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], "
        "[%1], %2, [%3], %4;\n" ::"r"(BulkSmem(dst)),
        "l"(src), "r"(bytes), "r"(BulkSmem(bar)), "l"(policy)
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
        "[%3];\n" ::"r"(BulkSmem(dst)),
        "l"(src), "r"(bytes), "r"(BulkSmem(bar))
        : "memory");
  }
}

FLASHJIT_DEVICE void BulkWait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT_%=;\n}\n" ::"r"(BulkSmem(bar)),
      "r"(parity)
      : "memory");
}

// Thread 0: store shared -> global as one bulk group (kHint: under L2 policy `policy`).
template <bool kHint>
FLASHJIT_DEVICE void BulkStore(void* dst, const void* src, uint32_t bytes, uint64_t policy) {
  if constexpr (kHint) {
    asm volatile(
        "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;\n" ::"l"(
            dst),
        "r"(BulkSmem(src)), "r"(bytes), "l"(policy)
        : "memory");
  } else {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
                 "r"(BulkSmem(src)), "r"(bytes)
                 : "memory");
  }
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Thread 0: until at most kPending bulk groups still read shared memory.
template <int kPending>
FLASHJIT_DEVICE void BulkWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

FLASHJIT_DEVICE void BulkWaitAll() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

template <class V>
__device__ void norm_bulk(const NormParams& p) {
  using T = typename V::DType;
  using W = typename V::WType;
  constexpr int kThreads = V::kThreads, kVec = V::kVec, kItems = V::kItems;
  constexpr int kStages = V::kStages;
  constexpr bool kCopy = V::kBulk == 2;
  // Refill the buffer of row k - kLag after storing row k (see the top of the file).
  constexpr int kLag = kStages >= 3 ? 1 : 0;
  static_assert(V::kKind == kRms && V::kRows == 1 && kItems > 0, "bulk: rms, one row per block");
  static_assert(kVec * sizeof(T) == 16, "bulk: 16-byte accesses");
  static_assert(kStages >= 1 && kLag < kStages, "bulk: at least one row buffer");
  __shared__ uint64_t bars[kStages];
  __shared__ float scratch[32];
  extern __shared__ __align__(128) unsigned char bulk_smem[];

  const int64_t rows = p.rows, hidden = p.hidden;
  const uint32_t row_bytes = static_cast<uint32_t>(hidden * sizeof(T));
  const uint32_t stage_bytes = (row_bytes + 127u) & ~127u;
  const int64_t xs = p.x_layout.stride_token, os = p.out_layout.stride_token;
  const T* x = static_cast<const T*>(p.x);
  T* out = static_cast<T*>(p.out);
  const int64_t first = blockIdx.x, step = gridDim.x;
  if (first >= rows) return;  // uniform per block
  // Rows of this block: first + k * step, k < count.
  const int64_t count = (rows - first + step - 1) / step;
  const bool leader = threadIdx.x == 0;
  constexpr bool kHint = V::kStreaming;  // evict-first L2 policy on the bulk copies
  const uint64_t policy = kHint && leader ? BulkEvictFirst() : 0;

  if (leader) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) BulkBarrierInit(&bars[s]);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    for (int s = 0; s < kStages && s < count; ++s)
      BulkLoad<kHint>(bulk_smem + s * stage_bytes, x + (first + s * step) * xs, row_bytes, &bars[s],
                      policy);
  }

  if constexpr (kCopy) {
    if (!leader) return;
    for (int64_t k = 0; k < count; ++k) {
      const int s = static_cast<int>(k % kStages);
      BulkWait(&bars[s], static_cast<uint32_t>((k / kStages) & 1));
      BulkStore<kHint>(out + (first + k * step) * os, bulk_smem + s * stage_bytes, row_bytes,
                       policy);
      const int64_t back = k - kLag, refill = back + kStages;
      if (back >= 0 && refill < count) {
        BulkWaitRead<kLag>();
        const int rs = static_cast<int>(back % kStages);
        BulkLoad<kHint>(bulk_smem + rs * stage_bytes, x + (first + refill * step) * xs, row_bytes,
                        &bars[rs], policy);
      }
    }
    BulkWaitAll();
    return;
  } else {
    __syncthreads();  // barriers initialised before anyone waits on them

    // Weights in registers: the same columns every row.              // (kItems, kVec)
    Vec<W, kVec> ws[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t col = Col<V>(i, threadIdx.x);
      if (col < hidden) ws[i] = LoadParam<W, kVec>(static_cast<const W*>(p.weight) + col);
    }
    const float inv_n = 1.f / static_cast<float>(hidden);
    Vec<W, kVec> unused_bias;

    for (int64_t k = 0; k < count; ++k) {
      const int s = static_cast<int>(k % kStages);
      T* buf = reinterpret_cast<T*>(bulk_smem + s * stage_bytes);
      BulkWait(&bars[s], static_cast<uint32_t>((k / kStages) & 1));
      // Two passes over the buffer (shared memory is cheap to re-read): no row in registers
      // across the reduction.
      float sum = 0.f, sum_sq = 0.f;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t col = Col<V>(i, threadIdx.x);
        if (col < hidden)
          Accumulate(*reinterpret_cast<const Vec<T, kVec>*>(buf + col), sum, sum_sq);
      }
      const float scale = rsqrtf(RowSum<kThreads>(sum_sq, scratch) * inv_n + p.eps);
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t col = Col<V>(i, threadIdx.x);
        if (col < hidden) {
          Vec<T, kVec>* e = reinterpret_cast<Vec<T, kVec>*>(buf + col);
          *e = Normalize<V>(*e, ws[i], unused_bias, 0.f, scale);
        }
      }
      // This thread's writes to the buffer, visible to the bulk engine's reads after the barrier.
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncthreads();
      if (leader) {
        BulkStore<kHint>(out + (first + k * step) * os, buf, row_bytes, policy);
        const int64_t back = k - kLag, refill = back + kStages;
        if (back >= 0 && refill < count) {
          BulkWaitRead<kLag>();
          const int rs = static_cast<int>(back % kStages);
          BulkLoad<kHint>(bulk_smem + rs * stage_bytes, x + (first + refill * step) * xs, row_bytes,
                          &bars[rs], policy);
        }
      }
    }
    if (leader) BulkWaitAll();
  }
}

}  // namespace flashjit::norm
