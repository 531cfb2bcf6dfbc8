// Tensor-core and shared-memory matrix instructions of sm_80 and later (mma.sync, ldmatrix).
//
// Fragments follow the PTX ISA layouts of mma.m16n8k16 with fp32 accumulators:
//   A (16x16, row):  4 x uint32 (two 16-bit values each), rows lane/4 and lane/4 + 8
//   B (16x8,  col):  2 x uint32, column lane/4, rows (lane%4)*2 + {0,1} and + 8
//   C (16x8):        4 x float,  rows lane/4 (c0, c1) and lane/4 + 8 (c2, c3),
//                                columns (lane%4)*2 + {0,1}
#pragma once

#include "common/config.cuh"

namespace flashjit::attention {

template <class A, class B>
struct IsSame {
  static constexpr bool value = false;
};
template <class A>
struct IsSame<A, A> {
  static constexpr bool value = true;
};
// Select<b, X, Y>::type is X when b, else Y.
template <bool B, class X, class Y>
struct Select {
  using type = X;
};
template <class X, class Y>
struct Select<false, X, Y> {
  using type = Y;
};

FLASHJIT_DEVICE uint32_t SmemAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 matrices of 16-bit elements; lane i gives the row address of row i%8 of matrix i/8.
FLASHJIT_DEVICE void LdMatrixX4(uint32_t (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddress(row_address)));
}

// As LdMatrixX4, each matrix transposed.
FLASHJIT_DEVICE void LdMatrixX4Trans(uint32_t (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SmemAddress(row_address)));
}

// c += a * b, m16n8k16, 16-bit inputs of type T (half or __nv_bfloat16), fp32 accumulators.
template <class T>
FLASHJIT_DEVICE void MmaM16N8K16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (IsSame<T, half>::value) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two floats as one register of two 16-bit values of type T (lo in the low half).
template <class T>
FLASHJIT_DEVICE uint32_t PackPair(float lo, float hi) {
  if constexpr (IsSame<T, half>::value) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  } else {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
}

}  // namespace flashjit::attention
