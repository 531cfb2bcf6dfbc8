// The one place that branches on the compiler (NVRTC vs nvcc) and on host vs device.
// Every template includes this first.
#pragma once

#if defined(__CUDACC_RTC__)
// NVRTC has no system headers: fixed-width integers come from its built-ins.
using int8_t = signed char;
using uint8_t = unsigned char;
using int16_t = short;
using uint16_t = unsigned short;
using int32_t = int;
using uint32_t = unsigned int;
using int64_t = long long;
using uint64_t = unsigned long long;
#define FLASHJIT_DEVICE_ONLY 1
#else
#include <cstdint>
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#define FLASHJIT_HD __host__ __device__
#define FLASHJIT_DEVICE __device__ __forceinline__
#define FLASHJIT_HAS_DEVICE 1
#else
#define FLASHJIT_HD
#define FLASHJIT_DEVICE inline
#define FLASHJIT_HAS_DEVICE 0
#endif

// Params structs are shared by host and device: this checks their layout on both sides.
#define FLASHJIT_CHECK_PARAMS(T, size)                                              \
  static_assert(sizeof(T) == (size), #T " layout changed: update host and device"); \
  static_assert(alignof(T) == 8, #T " must be 8-byte aligned")
