// One warp's share of decode attention: 16 keys of a tile against up to 16 query heads, on
// tensor cores (mma.m16n8k16), with the online softmax in registers.
//
// Rows of the m16 tile are query heads (lane/4 and lane/4 + 8 for this thread), columns of S
// are keys. The warp keeps its own softmax state over all the tiles it sees; the CTA merges the
// four warps' states at the end.
#pragma once

#include "attention/logits_hooks.cuh"
#include "attention/mma_sm80.cuh"
#include "attention/paged_kv.cuh"

namespace flashjit::attention {

template <class V>
struct DecodeWarp {
  using T = typename V::DTypeQ;  // tensor-core input type
  static constexpr int kD = V::kHeadDim;
  static constexpr int kChunks = kD / 8;  // 16-byte chunks per 16-bit row

  uint32_t q_frag[kD / 16][4];  // A fragments of Q          (16, D)
  float o[kD / 8][4];           // C fragments of O          (16, D)
  float m[2], l[2];             // rows lane/4, lane/4 + 8
  float slope[2];               // ALiBi slope of those rows

  FLASHJIT_DEVICE void Init(const T* q_smem) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      LdMatrixX4(q_frag[kk], q_smem + SwizzledChunk<kChunks>(lane % 16, kk * 2 + lane / 16) * 8);
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    m[0] = m[1] = NegInf();
    l[0] = l[1] = 0.f;
  }

  // Processes keys key0 .. key0 + 15 held as swizzled 16-bit rows in k_rows / v_rows
  // (16, D) each. Keys outside [key_lo, key_end) are masked.
  FLASHJIT_DEVICE void Step(const DecodeParams& p, const T* k_rows, const T* v_rows, int key0,
                            int key_lo, int key_end, int qpos) {
    const int lane = threadIdx.x % 32;
    // S = Q K^T                                             (16, 16) as two n8 tiles
    float s[2][4] = {};
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      uint32_t b[4];
      const int row = (lane / 16) * 8 + lane % 8;
      LdMatrixX4(b, k_rows + SwizzledChunk<kChunks>(row, kk * 2 + (lane / 8) % 2) * 8);
      MmaM16N8K16<T>(s[0], q_frag[kk], b[0], b[1]);
      MmaM16N8K16<T>(s[1], q_frag[kk], b[2], b[3]);
    }
    // Scores, masking, and the running maximum of each row.
    float row_max[2] = {NegInf(), NegInf()};
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int kpos = key0 + nt * 8 + (lane % 4) * 2 + (e & 1);
        const bool valid = kpos >= key_lo && kpos < key_end;
        const float x =
            TransformScore<V>(s[nt][e], p.sm_scale, p.soft_cap, slope[e / 2], kpos, qpos);
        s[nt][e] = valid ? x : NegInf();
        row_max[e / 2] = fmaxf(row_max[e / 2], s[nt][e]);
      }
    }
    const float c = p.score_scale;
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(0xffffffffu, row_max[r], 1));
      row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(0xffffffffu, row_max[r], 2));
      const float m_new = fmaxf(m[r], row_max[r]);
      alpha[r] = ScoreWeight(m[r], m_new, c);  // 0 when m was -inf
      m[r] = m_new;
      l[r] *= alpha[r];
    }
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[nt][e] = ScoreWeight(s[nt][e], m[e / 2], c);
        l[e / 2] += s[nt][e];
      }
    }
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) {
      o[j][0] *= alpha[0];
      o[j][1] *= alpha[0];
      o[j][2] *= alpha[1];
      o[j][3] *= alpha[1];
    }
    // O += P V                                              (16, 16) x (16, D)
    uint32_t p_frag[4] = {PackPair<T>(s[0][0], s[0][1]), PackPair<T>(s[0][2], s[0][3]),
                          PackPair<T>(s[1][0], s[1][1]), PackPair<T>(s[1][2], s[1][3])};
#pragma unroll
    for (int nn = 0; nn < kD / 16; ++nn) {
      uint32_t b[4];
      const int row = ((lane / 8) % 2) * 8 + lane % 8;
      LdMatrixX4Trans(b, v_rows + SwizzledChunk<kChunks>(row, nn * 2 + lane / 16) * 8);
      MmaM16N8K16<T>(o[2 * nn], p_frag, b[0], b[1]);
      MmaM16N8K16<T>(o[2 * nn + 1], p_frag, b[2], b[3]);
    }
  }

  // Completes the row sums over the four lanes that share each row.
  FLASHJIT_DEVICE void ReduceRowSums() {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    }
  }
};

}  // namespace flashjit::attention
