// The CUDA driver API, opened lazily with dlopen("libcuda.so.1").
//
// The library loads on machines with no driver; the first GPU call there returns kNoDriver with
// a clear message. Thread-safe: the table is filled once.
#pragma once

#include <cuda.h>
#include <flashjit/status.h>

#include <string>

namespace flashjit::runtime {

struct DriverApi {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
  CUresult (*cuFuncGetAttribute)(int*, CUfunction_attribute, CUfunction);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuStreamCreate)(CUstream*, unsigned int);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned int);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuPointerGetAttribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*cuStreamBeginCapture)(CUstream, CUstreamCaptureMode);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
  CUresult (*cuGraphInstantiate)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphDestroy)(CUgraph);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  // Optional (null on drivers before CUDA 12): only launches with cluster dims need it.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);
};

// The driver table, cuInit done. kNoDriver when libcuda.so.1 is missing or cuInit fails.
Result<const DriverApi*> Driver();

// "CUDA_ERROR_INVALID_VALUE (invalid argument) in cuLaunchKernel(flashjit_rmsnorm)"
Status CudaStatus(CUresult rc, const std::string& what);

#define FLASHJIT_CU(api, call, what)                                                  \
  do {                                                                                \
    CUresult _fj_rc = (api)->call;                                                    \
    if (_fj_rc != CUDA_SUCCESS) return ::flashjit::runtime::CudaStatus(_fj_rc, what); \
  } while (0)

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_smem_per_block_optin = 0;
  size_t total_mem = 0;
  // The arch flashjit compiles for on this device: "sm_90a" on compute capability 9.0.
  std::string arch() const;
};

Result<int> DeviceCount();
Result<DeviceInfo> GetDeviceInfo(int ordinal);
Result<int> DriverVersion();  // e.g. 13000

// The device's primary context (retained once per process, never released: it must outlive
// every module loaded into it). Makes it current on the calling thread when none is.
Result<CUcontext> PrimaryContext(int ordinal);

}  // namespace flashjit::runtime
