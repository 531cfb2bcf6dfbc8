#include "src/runtime/kernel.h"

#include <fmt/format.h>

#include "src/runtime/driver.h"

namespace flashjit::runtime {

Result<std::unique_ptr<Kernel>> Kernel::Load(const std::vector<uint8_t>& cubin,
                                             const std::vector<std::string>& symbols, int device,
                                             std::string name) {
  FLASHJIT_ASSIGN_OR_RETURN(const DriverApi* d, Driver());
  FLASHJIT_ASSIGN_OR_RETURN(CUcontext ctx, PrimaryContext(device));
  CUcontext previous = nullptr;
  d->cuCtxGetCurrent(&previous);
  if (previous != ctx) FLASHJIT_CU(d, cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  auto k = std::unique_ptr<Kernel>(new Kernel());
  k->context_ = ctx;
  k->device_ = device;
  k->name_ = std::move(name);
  CUresult rc = d->cuModuleLoadData(&k->module_, cubin.data());
  Status status;
  if (rc != CUDA_SUCCESS) {
    status = CudaStatus(rc, fmt::format("cuModuleLoadData({})", k->name_));
  } else {
    for (const std::string& sym : symbols) {
      CUfunction f = nullptr;
      rc = d->cuModuleGetFunction(&f, k->module_, sym.c_str());
      if (rc != CUDA_SUCCESS) {
        status = CudaStatus(rc, fmt::format("cuModuleGetFunction({}, {})", k->name_, sym));
        break;
      }
      k->functions_.push_back(f);
    }
  }
  if (previous != ctx && previous) d->cuCtxSetCurrent(previous);
  if (!status.ok()) return status;
  k->smem_limit_ = std::make_unique<std::atomic<int>[]>(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) {
    // The default allowance is 48 KB less the function's static shared memory: a launch that
    // asks for more dynamic shared memory than that must raise the attribute first.
    int allowed = 0;
    if (d->cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              k->functions_[i]) != CUDA_SUCCESS)
      allowed = 0;  // unknown: raise the attribute for any dynamic shared memory
    k->smem_limit_[i] = allowed;
    Resources r;
    if (d->cuFuncGetAttribute(&r.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, k->functions_[i]) !=
        CUDA_SUCCESS)
      r.registers = 0;
    if (d->cuFuncGetAttribute(&r.static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                              k->functions_[i]) != CUDA_SUCCESS)
      r.static_smem = 0;
    k->resources_.push_back(r);
    // Cluster launches of more than 8 CTAs (sm_90: up to 16) need this; it changes nothing for
    // other launches, and a device or driver without it only keeps the portable limit.
    (void)d->cuFuncSetAttribute(k->functions_[i],
                                CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  }
  return k;
}

std::unique_ptr<Kernel> Kernel::Unloaded(size_t entries, int device, std::string name) {
  auto k = std::unique_ptr<Kernel>(new Kernel());
  k->device_ = device;
  k->name_ = std::move(name);
  k->functions_.assign(entries, nullptr);
  k->resources_.assign(entries, Resources{});
  k->smem_limit_ = std::make_unique<std::atomic<int>[]>(entries);
  return k;
}

Kernel::~Kernel() {
  auto d = Driver();
  if (!d.ok() || !module_) return;
  CUcontext previous = nullptr;
  (*d)->cuCtxGetCurrent(&previous);
  if (previous != context_) (*d)->cuCtxSetCurrent(context_);
  (*d)->cuModuleUnload(module_);
  if (previous != context_) (*d)->cuCtxSetCurrent(previous);
}

namespace {

// Makes `ctx` current for a scope and gives the caller's context back at its end, so that a
// launch on another device than the caller's current one does not change the caller's current
// device (PyTorch's torch.cuda.current_device() is the current context's device). A thread with
// no current context keeps `ctx`.
class ScopedContext {
 public:
  ScopedContext(const DriverApi* api, CUcontext ctx) : api_(api) {
    api->cuCtxGetCurrent(&previous_);
    if (previous_ != ctx) rc_ = api->cuCtxSetCurrent(ctx);
    restore_ = previous_ != ctx && previous_ != nullptr && rc_ == CUDA_SUCCESS;
  }
  ~ScopedContext() {
    if (restore_) api_->cuCtxSetCurrent(previous_);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  CUresult status() const { return rc_; }

 private:
  const DriverApi* api_;
  CUcontext previous_ = nullptr;
  CUresult rc_ = CUDA_SUCCESS;
  bool restore_ = false;
};

}  // namespace

Status Kernel::Launch(int entry, const LaunchConfig& cfg, const void* params,
                      CUstream stream) const {
  if (!module_) return Status::Ok();  // dry run: built, never loaded
  // Driver() is a static local after the first call: a load and a branch.
  auto d = Driver();
  if (!d.ok()) return d.status();
  const DriverApi* api = *d;
  const ScopedContext scope(api, context_);
  if (scope.status() != CUDA_SUCCESS) return CudaStatus(scope.status(), "cuCtxSetCurrent");
  CUfunction f = functions_[entry];
  if (static_cast<int>(cfg.dynamic_smem) > smem_limit_[entry].load(std::memory_order_relaxed)) {
    FLASHJIT_CU(api,
                cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(cfg.dynamic_smem)),
                "cuFuncSetAttribute(max dynamic shared memory) for " + name_);
    smem_limit_[entry].store(static_cast<int>(cfg.dynamic_smem), std::memory_order_relaxed);
  }
  void* args[] = {const_cast<void*>(params)};
  const bool cluster = cfg.cluster_x * cfg.cluster_y * cfg.cluster_z > 1;
  if (cluster || cfg.programmatic) {
    if (!api->cuLaunchKernelEx)
      return Status::NoDriver(std::string("the driver lacks cuLaunchKernelEx, needed by ") +
                              (cluster ? "the cluster launch" : "the programmatic (PDL) launch") +
                              " of " + name_ + "; update the NVIDIA driver");
    CUlaunchAttribute attrs[2] = {};
    unsigned n = 0;
    if (cluster) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[n].value.clusterDim.x = cfg.cluster_x;
      attrs[n].value.clusterDim.y = cfg.cluster_y;
      attrs[n++].value.clusterDim.z = cfg.cluster_z;
    }
    if (cfg.programmatic) {
      attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attrs[n++].value.programmaticStreamSerializationAllowed = 1;
    }
    CUlaunchConfig lc{};
    lc.gridDimX = cfg.grid_x;
    lc.gridDimY = cfg.grid_y;
    lc.gridDimZ = cfg.grid_z;
    lc.blockDimX = cfg.block_x;
    lc.blockDimY = cfg.block_y;
    lc.blockDimZ = cfg.block_z;
    lc.sharedMemBytes = cfg.dynamic_smem;
    lc.hStream = stream;
    lc.attrs = attrs;
    lc.numAttrs = n;
    CUresult rc = api->cuLaunchKernelEx(&lc, f, args, nullptr);
    if (rc != CUDA_SUCCESS)
      return CudaStatus(rc, "cuLaunchKernelEx(" + name_ + (cluster ? ", cluster)" : ", PDL)"));
    return Status::Ok();
  }
  CUresult rc = api->cuLaunchKernel(f, cfg.grid_x, cfg.grid_y, cfg.grid_z, cfg.block_x, cfg.block_y,
                                    cfg.block_z, cfg.dynamic_smem, stream, args, nullptr);
  if (rc != CUDA_SUCCESS) return CudaStatus(rc, "cuLaunchKernel(" + name_ + ")");
  return Status::Ok();
}

}  // namespace flashjit::runtime
