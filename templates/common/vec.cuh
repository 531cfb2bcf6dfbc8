// Vectorised loads/stores and element conversions used by the memory-bound kernels.
#pragma once

#include "common/config.cuh"

namespace flashjit {

// N elements of T moved as one aligned access of sizeof(T) * N bytes.
template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <class T>
FLASHJIT_DEVICE float ToFloat(T x);
template <>
FLASHJIT_DEVICE float ToFloat<float>(float x) {
  return x;
}
template <>
FLASHJIT_DEVICE float ToFloat<half>(half x) {
  return __half2float(x);
}
template <>
FLASHJIT_DEVICE float ToFloat<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <>
FLASHJIT_DEVICE float ToFloat<__nv_fp8_e4m3>(__nv_fp8_e4m3 x) {
  return static_cast<float>(x);
}
template <>
FLASHJIT_DEVICE float ToFloat<__nv_fp8_e5m2>(__nv_fp8_e5m2 x) {
  return static_cast<float>(x);
}

template <class T>
FLASHJIT_DEVICE T FromFloat(float x);
template <>
FLASHJIT_DEVICE float FromFloat<float>(float x) {
  return x;
}
template <>
FLASHJIT_DEVICE half FromFloat<half>(float x) {
  return __float2half_rn(x);
}
template <>
FLASHJIT_DEVICE __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <class T, int N>
FLASHJIT_DEVICE Vec<T, N> LoadVec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}

// Streaming load: read once, do not keep in L1.
template <class T, int N>
FLASHJIT_DEVICE Vec<T, N> LoadVecStreaming(const T* p) {
  Vec<T, N> out;
  if constexpr (sizeof(Vec<T, N>) == 16) {
    int4 r = __ldcs(reinterpret_cast<const int4*>(p));
    out = *reinterpret_cast<Vec<T, N>*>(&r);
  } else {
    out = *reinterpret_cast<const Vec<T, N>*>(p);
  }
  return out;
}

template <class T, int N>
FLASHJIT_DEVICE void StoreVec(T* p, const Vec<T, N>& v) {
  *reinterpret_cast<Vec<T, N>*>(p) = v;
}

}  // namespace flashjit

namespace flashjit {

// Streaming store: written once, evict first from the caches.
template <class T, int N>
FLASHJIT_DEVICE void StoreVecStreaming(T* p, const Vec<T, N>& v) {
  if constexpr (sizeof(Vec<T, N>) == 16) {
    __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
  } else if constexpr (sizeof(Vec<T, N>) == 8) {
    __stcs(reinterpret_cast<int2*>(p), *reinterpret_cast<const int2*>(&v));
  } else {
    *reinterpret_cast<Vec<T, N>*>(p) = v;
  }
}

// Load/store with or without the streaming hint, chosen at compile time.
template <bool kStreaming, class T, int N>
FLASHJIT_DEVICE Vec<T, N> LoadVecHint(const T* p) {
  if constexpr (kStreaming) {
    return LoadVecStreaming<T, N>(p);
  } else {
    return LoadVec<T, N>(p);
  }
}

template <bool kStreaming, class T, int N>
FLASHJIT_DEVICE void StoreVecHint(T* p, const Vec<T, N>& v) {
  if constexpr (kStreaming) {
    StoreVecStreaming(p, v);
  } else {
    StoreVec(p, v);
  }
}

}  // namespace flashjit
