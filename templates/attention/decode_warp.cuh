// One warp's share of decode attention: 16 keys of a tile against up to 16 query heads, on
// tensor cores (mma.m16n8k16), with the online softmax in registers.
//
// Rows of the m16 tile are query heads (lane/4 and lane/4 + 8 for this thread), columns of S
// are keys. The warp keeps its own softmax state over all the tiles it sees; the CTA merges the
// four warps' states at the end.
#pragma once

#include "attention/kv_prep.cuh"
#include "attention/logits_hooks.cuh"
#include "attention/mma_sm80.cuh"
#include "attention/paged_kv.cuh"

namespace flashjit::attention {

// fp8 caches are read straight from the fp8 tile into B fragments (K: kFp8RegsK, but for
// in-kernel RoPE at D 256, whose keys come rotated as 16-bit rows; V: kFp8RegsV, always), with
// two index permutations that make every thread's bytes contiguous:
//   Q.K: thread t = lane % 4 holds k indices 2t, 2t+1, 2t+8, 2t+9 of each 16-wide step kk; they
//        are taken from head-dim columns t * D/4 + kk * 4 + {0, 1, 2, 3} of both Q and K (a
//        permutation of the summed index, so S is unchanged). One 16-byte load gives 4 steps.
//        With RoPE (kRopeRegs) the steps kk < D/32 take columns t * D/8 + kk * 4 + {0..3} and
//        the others their partners D/2 on, so that a thread holds both dims of each pair it
//        turns (RopeKeyFragAngles) between the fp8 bytes and the tensor cores.
//   P.V: n8 tile j of the output, column n, is head-dim column n * D/8 + j; thread g = lane / 4
//        reads D/8 contiguous bytes of each of its four keys (2t, 2t+1, 2t+8, 2t+9) and byte
//        permutes pair keys. The epilogue writes O back in head-dim order (Fp8OutColumn).
// They multiply in f16 whatever the query's type (TC): an fp8 pair becomes an f16 pair in two
// instructions, a bf16 pair in four, and the conversions were a third of the fp8 loop's
// instructions (kv_prep.cuh). A bf16 query enters f16 at Init scaled per row by a power of two
// that puts the row's largest |q| in [2^14, 2^15): exact for every element down to 2^-28 of it
// (smaller ones keep f16's subnormal precision, below 2^-38 of the largest term), no overflow;
// the scale comes back out exactly (Scores, or the softmax's exp2 factor: kFoldUnscale). P (in
// [0, 1]) rounds to f16, finer than bf16.
template <class V>
struct DecodeWarp {
  using T = typename V::DTypeQ;
  using TKV = typename V::DTypeKV;
  static constexpr int kD = V::kHeadDim;
  static constexpr int kChunks = kD / 8;  // 16-byte chunks per 16-bit row
  static constexpr bool kRopeRegs = V::kRope && DecodeRopeInRegs(kD, sizeof(TKV));
  static constexpr bool kFp8RegsK = sizeof(TKV) == 1 && (!V::kRope || kRopeRegs);
  static constexpr bool kFp8RegsV = sizeof(TKV) == 1;
  using TC = typename Select<kFp8RegsK, half, T>::type;  // Q.K's tensor-core input type
  using TP = typename Select<kFp8RegsV, half, T>::type;  // P.V's
  // A bf16 query of an fp8 variant, scaled into f16 per row (q_unscale: the scale's inverse).
  static constexpr bool kScaledQ = kFp8RegsK && !IsSame<T, half>::value;
  // Where logits are the raw products (no soft cap, no ALiBi) the scaled rows' scores stay in
  // their units through the softmax: m is then the scaled maximum (FinishRows unscales it), and
  // the exponent's factor carries q_unscale. (s' - m') * (c * 2^-k) is (s - m) * c bit for bit
  // (power-of-two factors), one multiply a row a step instead of one a score.
  static constexpr bool kFoldUnscale = kScaledQ && !V::kSoftCap && !V::kAlibi;
  static constexpr int kFp8Chunks = kD / 16;  // 16-byte chunks per fp8 row
  // Q's A fragments read from the CTA's swizzled Q rows at each step (ldmatrix) instead of held
  // in 2 * D / 8 registers a thread: the D 256 form, whose 255 registers spill otherwise.
  static constexpr bool kQSmem = V::kQSmem && !kFp8RegsK;

  uint32_t q_frag[kQSmem ? 1 : kD / 16][4];  // A fragments of Q          (16, D)
  const T* q_rows;                           // kQSmem: the swizzled Q rows (16, D)
  float o[kD / 8][4];                        // C fragments of O          (16, D)
  float m[2], l[2];                          // rows lane/4, lane/4 + 8
  float slope[2];                            // ALiBi slope of those rows
  float q_unscale[2];                        // kScaledQ: q.k = (q * 2^s).k * q_unscale, rows
  using RopeAngles = RopeKeyFragAngles<kD, TKV>;
  struct None {};
  typename Select<kRopeRegs, RopeAngles, None>::type rope;  // kRopeRegs: the keys' angles
  const DecodeRopeFreq* rope_table;                         // kRopeRegs: FillRopeTable's

  // kFp8RegsK: the first of the four head-dim columns of step kk's k indices for thread t.
  static FLASHJIT_DEVICE int Fp8KColumn(int t, int kk) {
    if constexpr (kRopeRegs) {
      constexpr int kW = kD / 32;  // steps of each half
      return kk / kW * (kD / 2) + t * (kD / 8) + kk % kW * 4;
    } else {
      return t * (kD / 4) + kk * 4;
    }
  }

  // kFp8RegsV: head-dim column of accumulator o[j][c] (c = 0..3) of this thread.
  static FLASHJIT_DEVICE int Fp8OutColumn(int j, int c) {
    return (2 * (threadIdx.x % 4) + (c & 1)) * (kD / 8) + j;
  }

  FLASHJIT_DEVICE void Init(const T* q_smem, const DecodeRopeFreq* table = nullptr) {
    const int lane = threadIdx.x % 32;
    q_rows = q_smem;
    rope_table = table;
    if constexpr (kRopeRegs) rope.Init();
    if constexpr (kQSmem) {
      // read at each step (Scores)
    } else if constexpr (kFp8RegsK) {
      const int g = lane / 4, t = lane % 4;
      auto pair = [&](int row, int col) {  // two 16-bit values at (row, col), col even
        return *reinterpret_cast<const uint32_t*>(
            q_smem + SwizzledChunk<kChunks>(row, col / 8) * 8 + col % 8);
      };
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        const int col = Fp8KColumn(t, kk);
        q_frag[kk][0] = pair(g, col);
        q_frag[kk][1] = pair(g + 8, col);
        q_frag[kk][2] = pair(g, col + 2);
        q_frag[kk][3] = pair(g + 8, col + 2);
      }
      if constexpr (kScaledQ) ScaleQueryToF16();
    } else {
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk)
        LdMatrixX4(q_frag[kk], q_smem + SwizzledChunk<kChunks>(lane % 16, kk * 2 + lane / 16) * 8);
    }
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    m[0] = m[1] = NegInf();
    l[0] = l[1] = 0.f;
  }

  // kScaledQ: q_frag holds bf16 pairs (rows lane/4: [.][0], [.][2]; lane/4 + 8: [.][1], [.][3]);
  // each row is scaled by 2^s into f16, s = 14 - (the exponent of the row's largest |q|),
  // clamped to +-126 (a zero or subnormal row, an infinite one: still no overflow, NaN stays).
  FLASHJIT_DEVICE void ScaleQueryToF16() {
    auto lo = [](uint32_t w) { return __uint_as_float(w << 16); };  // bf16 -> f32: exact
    auto hi = [](uint32_t w) { return __uint_as_float(w & 0xffff0000u); };
    float amax[2] = {0.f, 0.f};
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        amax[i & 1] = fmaxf(amax[i & 1], fmaxf(fabsf(lo(q_frag[kk][i])), fabsf(hi(q_frag[kk][i]))));
    float scale[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {  // the four lanes of a row hold its D / 4 column groups
      amax[r] = fmaxf(amax[r], __shfl_xor_sync(0xffffffffu, amax[r], 1));
      amax[r] = fmaxf(amax[r], __shfl_xor_sync(0xffffffffu, amax[r], 2));
      const int e = static_cast<int>((__float_as_uint(amax[r]) >> 23) & 0xff) - 127;
      const int s = min(max(14 - e, -126), 126);
      scale[r] = __uint_as_float(static_cast<uint32_t>(127 + s) << 23);
      q_unscale[r] = __uint_as_float(static_cast<uint32_t>(127 - s) << 23);
    }
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float f = scale[i & 1];
        q_frag[kk][i] = PackPair<half>(lo(q_frag[kk][i]) * f, hi(q_frag[kk][i]) * f);
      }
  }

  // kRopeRegs: kW words at byte column col of fp8 key row `row`.
  template <int kW>
  static FLASHJIT_DEVICE void LoadFp8Words(const char* rows, int row, int col, uint32_t (&w)[kW]) {
    const char* p = rows + SwizzledChunk<kFp8Chunks>(row, col / 16) * 16 + col % 16;
    if constexpr (kW == 4) {
      const uint4 x = *reinterpret_cast<const uint4*>(p);
      w[0] = x.x, w[1] = x.y, w[2] = x.z, w[3] = x.w;
    } else {
      static_assert(kW == 2, "D 64 or 128");
      const uint2 x = *reinterpret_cast<const uint2*>(p);
      w[0] = x.x, w[1] = x.y;
    }
  }

  // kRopeRegs: S = Q K^T for the 16 fp8 keys in k_src at positions key0 .., each turned on its
  // way into the B fragments (RopeKeyFragAngles).
  FLASHJIT_DEVICE void RopeScores(const char* rows, int key0, float (&s)[2][4]) {
    constexpr int kW = kD / 32;  // words of each half a thread holds of a key
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    uint32_t x[2][kW], y[2][kW];  // keys g, g + 8: dims t D/8 .., and their partners
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      LoadFp8Words<kW>(rows, nt * 8 + g, t * (kD / 8), x[nt]);
      LoadFp8Words<kW>(rows, nt * 8 + g, kD / 2 + t * (kD / 8), y[nt]);
    }
    rope.Seek(key0 + g, rope_table);
    const DecodeRopeStep* steps = RopeAngles::Steps(rope_table);
#pragma unroll
    for (int j = 0; j < kW; ++j) {
      uint32_t bx[2][2], by[2][2];  // [key][pair]: f16 pairs, turned
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // bytes 2h, 2h + 1 of word j: frequencies 4j + 2h + {0, 1}
        float c[2][2], sn[2][2];     // [key][frequency]
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int f = 4 * j + 2 * h + q;
          rope.Turn(f, steps[f], c[0][q], sn[0][q], c[1][q], sn[1][q]);
        }
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          bx[nt][h] = h ? Fp8PairF16<TKV, 2, 3>(x[nt][j], x[nt][j])
                        : Fp8PairF16<TKV, 0, 1>(x[nt][j], x[nt][j]);
          by[nt][h] = h ? Fp8PairF16<TKV, 2, 3>(y[nt][j], y[nt][j])
                        : Fp8PairF16<TKV, 0, 1>(y[nt][j], y[nt][j]);
          TurnHalfPairs(bx[nt][h], by[nt][h], c[nt], sn[nt]);
        }
      }
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        MmaM16N8K16<TC>(s[nt], q_frag[j], bx[nt][0], bx[nt][1]);
        MmaM16N8K16<TC>(s[nt], q_frag[kW + j], by[nt][0], by[nt][1]);
      }
    }
    if constexpr (RopeAngles::kScale != 1.f) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[nt][e] *= 1.f / RopeAngles::kScale;
    }
  }

  // S = Q K^T for the 16 keys in k_src (positions key0 ..)    (16, 16) as two n8 tiles
  FLASHJIT_DEVICE void Scores(const void* k_src, int key0, float (&s)[2][4]) {
    const int lane = threadIdx.x % 32;
    if constexpr (kRopeRegs) {
      RopeScores(static_cast<const char*>(k_src), key0, s);
    } else if constexpr (kFp8RegsK) {
      constexpr int kPerThread = kD / 64;  // 16-byte chunks of a key row per thread
      const char* rows = static_cast<const char*>(k_src);
      const int g = lane / 4, t = lane % 4;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
        for (int i = 0; i < kPerThread; ++i) {
          const uint4 c = *reinterpret_cast<const uint4*>(
              rows + SwizzledChunk<kFp8Chunks>(nt * 8 + g, t * kPerThread + i) * 16);
          const uint32_t w[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const uint32_t b0 = Fp8PairF16<TKV, 0, 1>(w[j], w[j]);
            const uint32_t b1 = Fp8PairF16<TKV, 2, 3>(w[j], w[j]);
            MmaM16N8K16<TC>(s[nt], q_frag[i * 4 + j], b0, b1);
          }
        }
      }
    } else {
      const T* k_rows = static_cast<const T*>(k_src);
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        uint32_t b[4];
        const int row = (lane / 16) * 8 + lane % 8;
        LdMatrixX4(b, k_rows + SwizzledChunk<kChunks>(row, kk * 2 + (lane / 8) % 2) * 8);
        if constexpr (kQSmem) {
          uint32_t a[4];
          LdMatrixX4(a, q_rows + SwizzledChunk<kChunks>(lane % 16, kk * 2 + lane / 16) * 8);
          MmaM16N8K16<T>(s[0], a, b[0], b[1]);
          MmaM16N8K16<T>(s[1], a, b[2], b[3]);
        } else {
          MmaM16N8K16<T>(s[0], q_frag[kk], b[0], b[1]);
          MmaM16N8K16<T>(s[1], q_frag[kk], b[2], b[3]);
        }
      }
    }
    if constexpr (kScaledQ && !kFoldUnscale) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        s[nt][0] *= q_unscale[0];
        s[nt][1] *= q_unscale[0];
        s[nt][2] *= q_unscale[1];
        s[nt][3] *= q_unscale[1];
      }
    }
  }

  // kFp8RegsV: n8 tiles 4w + kByte of P.V from word w of the four key rows.
  template <int kByte>
  FLASHJIT_DEVICE void Fp8PvTile(const uint32_t (&p_frag)[4], int tile, uint32_t k0, uint32_t k1,
                                 uint32_t k8, uint32_t k9) {
    const uint32_t b0 = Fp8PairF16<TKV, kByte, 4 + kByte>(k0, k1);
    const uint32_t b1 = Fp8PairF16<TKV, kByte, 4 + kByte>(k8, k9);
    MmaM16N8K16<TP>(o[tile], p_frag, b0, b1);
  }

  // O += P V for the 16 values in v_src                      (16, 16) x (16, D)
  FLASHJIT_DEVICE void AccumulatePv(const uint32_t (&p_frag)[4], const void* v_src) {
    const int lane = threadIdx.x % 32;
    if constexpr (kFp8RegsV) {
      constexpr int kBytes = kD / 8, kWords = kBytes / 4;  // of each key row, per thread
      const char* rows = static_cast<const char*>(v_src);
      const int g = lane / 4, t = lane % 4;
      uint32_t w[4][kWords];  // keys 2t, 2t + 1, 2t + 8, 2t + 9
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int key = 2 * t + (r & 1) + (r >> 1) * 8;
        if constexpr (kBytes >= 16) {
#pragma unroll
          for (int c = 0; c < kBytes / 16; ++c) {
            const uint4 x = *reinterpret_cast<const uint4*>(
                rows + SwizzledChunk<kFp8Chunks>(key, g * (kBytes / 16) + c) * 16);
            w[r][c * 4 + 0] = x.x;
            w[r][c * 4 + 1] = x.y;
            w[r][c * 4 + 2] = x.z;
            w[r][c * 4 + 3] = x.w;
          }
        } else {
          const uint2 x = *reinterpret_cast<const uint2*>(
              rows + SwizzledChunk<kFp8Chunks>(key, g / 2) * 16 + (g % 2) * 8);
          w[r][0] = x.x;
          w[r][1] = x.y;
        }
      }
#pragma unroll
      for (int i = 0; i < kWords; ++i) {
        Fp8PvTile<0>(p_frag, i * 4 + 0, w[0][i], w[1][i], w[2][i], w[3][i]);
        Fp8PvTile<1>(p_frag, i * 4 + 1, w[0][i], w[1][i], w[2][i], w[3][i]);
        Fp8PvTile<2>(p_frag, i * 4 + 2, w[0][i], w[1][i], w[2][i], w[3][i]);
        Fp8PvTile<3>(p_frag, i * 4 + 3, w[0][i], w[1][i], w[2][i], w[3][i]);
      }
    } else {
      const T* v_rows = static_cast<const T*>(v_src);
#pragma unroll
      for (int nn = 0; nn < kD / 16; ++nn) {
        uint32_t b[4];
        const int row = ((lane / 8) % 2) * 8 + lane % 8;
        LdMatrixX4Trans(b, v_rows + SwizzledChunk<kChunks>(row, nn * 2 + lane / 16) * 8);
        MmaM16N8K16<T>(o[2 * nn], p_frag, b[0], b[1]);
        MmaM16N8K16<T>(o[2 * nn + 1], p_frag, b[2], b[3]);
      }
    }
  }

  // The logits of the step's scores (TransformScore), keys outside [key_lo, key_end) masked to
  // -inf when kMasked, and each row's maximum.
  template <bool kMasked>
  FLASHJIT_DEVICE void Logits(const DecodeParams& p, float (&s)[2][4], float (&row_max)[2],
                              int key0, int key_lo, int key_end, int qpos) const {
    const int lane = threadIdx.x % 32;
    const unsigned span = static_cast<unsigned>(max(key_end - key_lo, 0));
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int kpos = key0 + nt * 8 + (lane % 4) * 2 + (e & 1);
        const float x =
            TransformScore<V>(s[nt][e], p.sm_scale, p.soft_cap, slope[e / 2], kpos, qpos);
        // key_lo <= kpos < key_end, as one unsigned compare (key_lo <= key_end here)
        if constexpr (kMasked)
          s[nt][e] = static_cast<unsigned>(kpos - key_lo) < span ? x : NegInf();
        else
          s[nt][e] = x;
        row_max[e / 2] = fmaxf(row_max[e / 2], s[nt][e]);
      }
    }
  }

  // Processes keys key0 .. key0 + 15: k_src / v_src are the warp's 16 rows of the tile, as
  // swizzled 16-bit rows (16, D), or (kFp8RegsK / kFp8RegsV) the fp8 rows as loaded. Keys outside
  // [key_lo, key_end) are masked.
  FLASHJIT_DEVICE void Step(const DecodeParams& p, const void* k_src, const void* v_src, int key0,
                            int key_lo, int key_end, int qpos) {
    float s[2][4] = {};
    Scores(k_src, key0, s);
    // Logits, masking, and the running maximum of each row. Most steps' 16 keys lie wholly in
    // [key_lo, key_end) (the test is the same for the whole warp) and skip the mask.
    float row_max[2] = {NegInf(), NegInf()};
    if (key0 >= key_lo && key0 + 16 <= key_end)
      Logits<false>(p, s, row_max, key0, key_lo, key_end, qpos);
    else
      Logits<true>(p, s, row_max, key0, key_lo, key_end, qpos);
    const float c = p.score_scale;
    float cr[2] = {c, c};  // row r's factor inside exp2
    if constexpr (kFoldUnscale) {
      cr[0] = c * q_unscale[0];
      cr[1] = c * q_unscale[1];
    }
    float alpha[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(0xffffffffu, row_max[r], 1));
      row_max[r] = fmaxf(row_max[r], __shfl_xor_sync(0xffffffffu, row_max[r], 2));
      const float m_new = fmaxf(m[r], row_max[r]);
      alpha[r] = ScoreWeight(m[r], m_new, cr[r]);  // 0 when m was -inf
      m[r] = m_new;
      l[r] *= alpha[r];
    }
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[nt][e] = ScoreWeight(s[nt][e], m[e / 2], cr[e / 2]);
        l[e / 2] += s[nt][e];
      }
    }
    // O's rescale only when some row of the warp has a new maximum (alpha is exactly 1 for a
    // row whose maximum stayed, so skipping it changes no bit): after the first tiles most steps
    // skip kD / 2 multiplies, about a quarter of a step's instructions at D 128. Measured on the
    // H200 (session 14, two rounds, queued): fp8 KV -1.9 to -5.9 %, D 64 -0.7 to -1.4 %, 16-bit
    // D 128 level (±0.5 %); D 256 +0.1 to +0.9 % (its 255 registers), so D 256 always rescales.
    constexpr bool kLazyRescale = kD <= 128;
    if (!kLazyRescale || __any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
      for (int j = 0; j < kD / 8; ++j) {
        o[j][0] *= alpha[0];
        o[j][1] *= alpha[0];
        o[j][2] *= alpha[1];
        o[j][3] *= alpha[1];
      }
    }
    const uint32_t p_frag[4] = {PackPair<TP>(s[0][0], s[0][1]), PackPair<TP>(s[0][2], s[0][3]),
                                PackPair<TP>(s[1][0], s[1][1]), PackPair<TP>(s[1][2], s[1][3])};
    AccumulatePv(p_frag, v_src);
  }

  // Completes the rows after the last step: the row sums over the four lanes that share each
  // row, and (kFoldUnscale) the maxima back in the logits' units (exact; -inf stays -inf).
  FLASHJIT_DEVICE void FinishRows() {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
      if constexpr (kFoldUnscale) m[r] *= q_unscale[r];
    }
  }
};

}  // namespace flashjit::attention
