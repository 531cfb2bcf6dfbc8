#include "src/runtime/driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <vector>

namespace flashjit::runtime {
namespace {

struct Loaded {
  DriverApi api{};
  Status status;
};

template <class F>
bool Resolve(void* lib, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *out != nullptr;
}

Loaded* LoadDriver() {
  auto* l = new Loaded();  // lives for the process
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l->status = Status::NoDriver(fmt::format(
        "no CUDA driver: dlopen(libcuda.so.1) failed ({}); GPU calls are unavailable on this "
        "machine, CPU-side features (spec, render, compile, cache, bundles) still work",
        dlerror()));
    return l;
  }
  DriverApi& a = l->api;
  std::string missing;
  Resolve(lib, "cuInit", &a.cuInit, &missing);
  Resolve(lib, "cuDriverGetVersion", &a.cuDriverGetVersion, &missing);
  Resolve(lib, "cuDeviceGet", &a.cuDeviceGet, &missing);
  Resolve(lib, "cuDeviceGetCount", &a.cuDeviceGetCount, &missing);
  Resolve(lib, "cuDeviceGetName", &a.cuDeviceGetName, &missing);
  Resolve(lib, "cuDeviceGetAttribute", &a.cuDeviceGetAttribute, &missing);
  Resolve(lib, "cuDeviceTotalMem_v2", &a.cuDeviceTotalMem, &missing);
  Resolve(lib, "cuDevicePrimaryCtxRetain", &a.cuDevicePrimaryCtxRetain, &missing);
  Resolve(lib, "cuDevicePrimaryCtxRelease_v2", &a.cuDevicePrimaryCtxRelease, &missing);
  Resolve(lib, "cuCtxGetCurrent", &a.cuCtxGetCurrent, &missing);
  Resolve(lib, "cuCtxSetCurrent", &a.cuCtxSetCurrent, &missing);
  Resolve(lib, "cuCtxSynchronize", &a.cuCtxSynchronize, &missing);
  Resolve(lib, "cuModuleLoadData", &a.cuModuleLoadData, &missing);
  Resolve(lib, "cuModuleUnload", &a.cuModuleUnload, &missing);
  Resolve(lib, "cuModuleGetFunction", &a.cuModuleGetFunction, &missing);
  Resolve(lib, "cuFuncSetAttribute", &a.cuFuncSetAttribute, &missing);
  Resolve(lib, "cuFuncGetAttribute", &a.cuFuncGetAttribute, &missing);
  Resolve(lib, "cuLaunchKernel", &a.cuLaunchKernel, &missing);
  Resolve(lib, "cuGetErrorString", &a.cuGetErrorString, &missing);
  Resolve(lib, "cuGetErrorName", &a.cuGetErrorName, &missing);
  Resolve(lib, "cuMemAlloc_v2", &a.cuMemAlloc, &missing);
  Resolve(lib, "cuMemFree_v2", &a.cuMemFree, &missing);
  Resolve(lib, "cuMemcpyHtoD_v2", &a.cuMemcpyHtoD, &missing);
  Resolve(lib, "cuMemcpyDtoH_v2", &a.cuMemcpyDtoH, &missing);
  Resolve(lib, "cuMemsetD8_v2", &a.cuMemsetD8, &missing);
  Resolve(lib, "cuStreamCreate", &a.cuStreamCreate, &missing);
  Resolve(lib, "cuStreamDestroy_v2", &a.cuStreamDestroy, &missing);
  Resolve(lib, "cuStreamSynchronize", &a.cuStreamSynchronize, &missing);
  Resolve(lib, "cuEventCreate", &a.cuEventCreate, &missing);
  Resolve(lib, "cuEventDestroy_v2", &a.cuEventDestroy, &missing);
  Resolve(lib, "cuEventRecord", &a.cuEventRecord, &missing);
  Resolve(lib, "cuEventSynchronize", &a.cuEventSynchronize, &missing);
  Resolve(lib, "cuEventElapsedTime_v2", &a.cuEventElapsedTime, &missing);
  Resolve(lib, "cuPointerGetAttribute", &a.cuPointerGetAttribute, &missing);
  Resolve(lib, "cuStreamBeginCapture_v2", &a.cuStreamBeginCapture, &missing);
  Resolve(lib, "cuStreamEndCapture", &a.cuStreamEndCapture, &missing);
  Resolve(lib, "cuGraphInstantiateWithFlags", &a.cuGraphInstantiate, &missing);
  Resolve(lib, "cuGraphLaunch", &a.cuGraphLaunch, &missing);
  Resolve(lib, "cuGraphDestroy", &a.cuGraphDestroy, &missing);
  Resolve(lib, "cuGraphExecDestroy", &a.cuGraphExecDestroy, &missing);
  Resolve(lib, "cuMemcpyHtoDAsync_v2", &a.cuMemcpyHtoDAsync, &missing);
  std::string optional_missing;  // launches with cluster dims report it when they need it
  Resolve(lib, "cuLaunchKernelEx", &a.cuLaunchKernelEx, &optional_missing);
  if (!missing.empty()) {
    l->status = Status::NoDriver("libcuda.so.1 lacks " + missing + "; update the NVIDIA driver");
    return l;
  }
  CUresult rc = a.cuInit(0);
  if (rc != CUDA_SUCCESS) l->status = CudaStatus(rc, "cuInit (is a GPU visible?)");
  if (!l->status.ok() && rc != CUDA_SUCCESS) l->status = Status::NoDriver(l->status.message());
  return l;
}

}  // namespace

Result<const DriverApi*> Driver() {
  static Loaded* loaded = LoadDriver();
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

Status CudaStatus(CUresult rc, const std::string& what) {
  const char* name = "?";
  const char* text = "?";
  auto d = Driver();
  if (d.ok()) {
    (*d)->cuGetErrorName(rc, &name);
    (*d)->cuGetErrorString(rc, &text);
  }
  return Status::CudaError(
      fmt::format("{} ({}) in {}", name ? name : "?", text ? text : "?", what));
}

std::string DeviceInfo::arch() const {
  return fmt::format("sm_{}{}{}", cc_major, cc_minor, cc_major >= 9 ? "a" : "");
}

Result<int> DeviceCount() {
  FLASHJIT_ASSIGN_OR_RETURN(const DriverApi* d, Driver());
  int n = 0;
  FLASHJIT_CU(d, cuDeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

Result<int> DriverVersion() {
  FLASHJIT_ASSIGN_OR_RETURN(const DriverApi* d, Driver());
  int v = 0;
  FLASHJIT_CU(d, cuDriverGetVersion(&v), "cuDriverGetVersion");
  return v;
}

Result<DeviceInfo> GetDeviceInfo(int ordinal) {
  FLASHJIT_ASSIGN_OR_RETURN(const DriverApi* d, Driver());
  FLASHJIT_ASSIGN_OR_RETURN(int count, DeviceCount());
  if (ordinal < 0 || ordinal >= count)
    return Status::InvalidArgument(fmt::format(
        "device {} does not exist; this machine has {} CUDA device(s)", ordinal, count));
  CUdevice dev;
  FLASHJIT_CU(d, cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  FLASHJIT_CU(d, cuDeviceGetName(name, sizeof(name), dev), "cuDeviceGetName");
  info.name = name;
  FLASHJIT_CU(
      d, cuDeviceGetAttribute(&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
      "cuDeviceGetAttribute");
  FLASHJIT_CU(
      d, cuDeviceGetAttribute(&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
      "cuDeviceGetAttribute");
  FLASHJIT_CU(d,
              cuDeviceGetAttribute(&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
              "cuDeviceGetAttribute");
  FLASHJIT_CU(d,
              cuDeviceGetAttribute(&info.max_smem_per_block_optin,
                                   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
              "cuDeviceGetAttribute");
  FLASHJIT_CU(d, cuDeviceTotalMem(&info.total_mem, dev), "cuDeviceTotalMem");
  return info;
}

Result<CUcontext> PrimaryContext(int ordinal) {
  static std::mutex mu;
  static std::vector<CUcontext> contexts;
  FLASHJIT_ASSIGN_OR_RETURN(const DriverApi* d, Driver());
  FLASHJIT_ASSIGN_OR_RETURN(int count, DeviceCount());
  if (ordinal < 0 || ordinal >= count)
    return Status::InvalidArgument(fmt::format(
        "device {} does not exist; this machine has {} CUDA device(s)", ordinal, count));
  std::lock_guard<std::mutex> lock(mu);
  if (contexts.empty()) contexts.assign(count, nullptr);
  if (!contexts[ordinal]) {
    CUdevice dev;
    FLASHJIT_CU(d, cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    FLASHJIT_CU(d, cuDevicePrimaryCtxRetain(&contexts[ordinal], dev), "cuDevicePrimaryCtxRetain");
  }
  CUcontext current = nullptr;
  d->cuCtxGetCurrent(&current);
  if (!current) FLASHJIT_CU(d, cuCtxSetCurrent(contexts[ordinal]), "cuCtxSetCurrent");
  return contexts[ordinal];
}

}  // namespace flashjit::runtime
