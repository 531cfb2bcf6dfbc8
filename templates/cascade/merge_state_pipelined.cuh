// Attention-state merge over a resident grid with a cp.async pipeline: the same merge as
// merge_state.cuh (same formula, same treatment of -inf, NaN and +inf log-sum-exps), but each
// lane keeps kStages (row, column chunk, state) steps in flight in shared memory instead of
// registers, so an SM holds several times the bytes in flight of the one-round-trip form, and
// blocks never turn over.
//
// Each thread copies into, and later reads from, only its own slots: no block barrier is needed.
// Steps run per block in the order tile (kRows rows, tiles blockIdx.x, + gridDim.x, ...), column
// chunk, state. Needs kVec * sizeof(DType) in {4, 8, 16} (the cp.async sizes); rows whose mask
// byte is 0 are read but not written.
#pragma once

#include "cascade/merge_params.cuh"
#include "cascade/merge_state.cuh"
#include "common/vec.cuh"

namespace flashjit::cascade {

template <int kBytes>
FLASHJIT_DEVICE void CpAsync(void* smem, const void* global) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes");
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(global), "n"(kBytes)
                 : "memory");
  }
}

// Where a block's step sequence stands: the tile, the column chunk and the state.
struct MergeCursor {
  int64_t tile;
  int chunk, state;
  FLASHJIT_DEVICE void Advance(int chunks, int states) {
    if (++state < states) return;
    state = 0;
    if (++chunk < chunks) return;
    chunk = 0;
    tile += gridDim.x;
  }
};

template <class V>
__device__ void merge_state_pipelined(const MergeParams& p) {
  using T = typename V::DType;
  constexpr int kVec = V::kVec, kLanes = V::kLanes, kStages = V::kStages, kThreads = V::kThreads;
  constexpr int kRows = kThreads / kLanes, kBytes = kVec * static_cast<int>(sizeof(T));
  static_assert(kLanes <= 32 && 32 % kLanes == 0, "a row's lanes must lie in one warp");
  static_assert(kStages >= 2, "a pipeline needs two stages");
  __shared__ alignas(16) uint8_t v_buf[kStages][kThreads][kBytes];
  __shared__ float s_buf[kStages][kThreads];

  const int tid = threadIdx.x, group = tid / kLanes, lane = tid % kLanes;
  const int states = p.src[0].count + p.src[1].count;
  const int steps_per_chunk = states > 0 ? states : 1;  // no states: one empty step per chunk
  const int chunks = (p.head_dim + kLanes * kVec - 1) / (kLanes * kVec);
  const int64_t tiles = (p.rows + kRows - 1) / kRows;
  const int64_t my_tiles =
      blockIdx.x < tiles ? (tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  const int64_t total = my_tiles * chunks * steps_per_chunk;
  const float inf = Infinity();

  // Copies step `c`'s state vector chunk and log-sum-exp into this thread's slots of `stage`, or
  // marks the step empty (a row past the end, a column past head_dim, no states).
  auto issue = [&](const MergeCursor& c, int stage) {
    const int64_t row = c.tile * kRows + group;
    const int col = c.chunk * kLanes * kVec + lane * kVec;
    if (row < p.rows && col < p.head_dim && c.state < states) {
      const int64_t seq = FastDiv(static_cast<uint32_t>(row), p.heads);
      const int64_t head = row - seq * p.heads.divisor;
      const StateRef st(p, c.state);
      CpAsync<kBytes>(v_buf[stage][tid], st.Row<T>(seq, head) + col);
      CpAsync<4>(&s_buf[stage][tid],
                 &st.src->s[seq * st.src->s_seq + head * st.src->s_head + st.i * st.src->s_state]);
    } else {
      s_buf[stage][tid] = -inf;
    }
  };

  MergeCursor next{blockIdx.x, 0, 0}, cur = next;
  for (int k = 0; k < kStages - 1; ++k) {
    if (k < total) issue(next, k);
    next.Advance(chunks, steps_per_chunk);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }

  float m = -inf, den = 0.f, acc[kVec], lse = -inf;
  bool nan = false;
  for (int64_t k = 0; k < total; ++k) {
    const int stage = static_cast<int>(k % kStages);
    if (k + kStages - 1 < total) issue(next, static_cast<int>((k + kStages - 1) % kStages));
    next.Advance(chunks, steps_per_chunk);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1) : "memory");

    if (cur.state == 0) {
      m = -inf;
      den = 0.f;
      nan = false;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[j] = 0.f;
    }
    // Fold the state into the running maximum m, sum of 2^(s - m) and weighted sum.
    const float s = s_buf[stage][tid];
    nan |= s != s;
    if (s != -inf) {
      const Vec<T, kVec> x = *reinterpret_cast<const Vec<T, kVec>*>(v_buf[stage][tid]);
      const float m_new = fmaxf(m, s);
      const float f = exp2f(m - m_new);  // 0 while m = -inf; NaN for +inf, as documented
      const float w = exp2f(s - m_new);
      den = den * f + w;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[j] = acc[j] * f + w * ToFloat(x.v[j]);
      m = m_new;
    }

    if (cur.state == steps_per_chunk - 1) {  // the chunk's last state: write it
      const int64_t row = cur.tile * kRows + group;
      const int col = cur.chunk * kLanes * kVec + lane * kVec;
      const int64_t seq = FastDiv(static_cast<uint32_t>(row), p.heads);
      const int64_t head = row - seq * p.heads.divisor;
      const bool keep = row < p.rows && (p.mask == nullptr || p.mask[seq] != 0);
      nan |= den != den;
      const bool empty = !nan && m == -inf;  // no state with any key: v = 0, s = -inf
      if (cur.chunk == 0) lse = nan ? QuietNaN() : (empty ? -inf : m + log2f(den));
      if (keep && col < p.head_dim) {
        const float inv_den = 1.f / den;
        Vec<T, kVec> o;
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          o.v[j] = FromFloat<T>(nan ? QuietNaN() : (empty ? 0.f : acc[j] * inv_den));
        StoreVecStreaming(static_cast<T*>(p.v_out) + seq * p.out_v_seq + head * p.out_v_head + col,
                          o);
      }
      if (cur.chunk == chunks - 1) {
        // In place, s_out is a state's log-sum-exp that every lane of the row copied above; each
        // lane waited for its own copies of this row, so after the warp meets, none is pending.
        __syncwarp();
        if (keep && lane == 0 && p.s_out != nullptr)
          p.s_out[seq * p.out_s_seq + head * p.out_s_head] = lse;
      }
    }
    cur.Advance(chunks, steps_per_chunk);
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

}  // namespace flashjit::cascade
