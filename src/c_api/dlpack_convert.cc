// DLPack DLTensor -> flashjit::TensorView, and the check that a stream belongs to the tensors'
// device. Both are on every op's path: no allocation, no locks.
#include <dlfcn.h>
#include <fmt/format.h>

#include "src/c_api/c_api_internal.h"
#include "src/runtime/driver.h"

namespace flashjit::capi {

Result<DType> FromDLType(DLDataType t, const char* name) {
  if (t.lanes != 1)
    return Status::InvalidArgument(fmt::format(
        "{}: dtype has {} lanes; flashjit takes scalar elements (lanes 1)", name, t.lanes));
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) return DType::kF16;
      if (t.bits == 32) return DType::kF32;
      break;
    case kDLBfloat:
      if (t.bits == 16) return DType::kBF16;
      break;
    case kDLInt:
      if (t.bits == 32) return DType::kI32;
      if (t.bits == 64) return DType::kI64;
      break;
    case kDLUInt:
      if (t.bits == 8) return DType::kU8;
      break;
    case FLASHJIT_DL_BOOL:
      if (t.bits == 8) return DType::kBool;
      break;
    case FLASHJIT_DL_FLOAT8_E4M3FN:
      if (t.bits == 8) return DType::kF8E4M3;
      break;
    case FLASHJIT_DL_FLOAT8_E5M2:
      if (t.bits == 8) return DType::kF8E5M2;
      break;
    default:
      break;
  }
  return Status::InvalidArgument(fmt::format(
      "{}: DLPack dtype (code {}, bits {}) is not one flashjit handles; allowed: float16 (2,16), "
      "bfloat16 (4,16), float32 (2,32), float8_e4m3fn (10,8), float8_e5m2 (12,8), int32 (0,32), "
      "int64 (0,64), uint8 (1,8), bool (6,8)",
      name, t.code, t.bits));
}

Status FromDL(const DLTensor* t, const char* name, TensorView* v) {
  if (!t) return Status::InvalidArgument(fmt::format("{}: DLTensor pointer is NULL", name));
  if (t->device.device_type != kDLCUDA)
    return Status::InvalidArgument(
        fmt::format("{}: device type {} is not CUDA; flashjit needs tensors in CUDA device memory "
                    "(kDLCUDA = 2)",
                    name, static_cast<int>(t->device.device_type)));
  if (t->device.device_id < 0)
    return Status::InvalidArgument(
        fmt::format("{}: device id {} is negative", name, t->device.device_id));
  if (t->ndim < 0 || t->ndim > TensorView::kMaxDims)
    return Status::InvalidArgument(
        fmt::format("{}: ndim {} is outside [0, {}]", name, t->ndim, TensorView::kMaxDims));
  if (t->ndim > 0 && !t->shape)
    return Status::InvalidArgument(fmt::format("{}: shape is NULL with ndim {}", name, t->ndim));
  FLASHJIT_ASSIGN_OR_RETURN(v->dtype, FromDLType(t->dtype, name));
  v->ndim = t->ndim;
  v->device = t->device.device_id;
  int64_t expected = 1;
  for (int d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] < 0)
      return Status::InvalidArgument(
          fmt::format("{}: shape[{}] = {} is negative", name, d, t->shape[d]));
    v->shape[d] = t->shape[d];
    v->strides[d] = t->strides ? t->strides[d] : expected;
    expected *= t->shape[d] > 0 ? t->shape[d] : 1;
  }
  v->data = t->data ? static_cast<char*>(t->data) + t->byte_offset : nullptr;
  return Status::Ok();
}

Status FromDLOptional(const DLTensor* t, const char* name, TensorView* v) {
  if (!t) {
    *v = TensorView();
    return Status::Ok();
  }
  return FromDL(t, name, v);
}

namespace {

// Stream -> device queries that the runtime's driver table does not carry. Resolved once from
// the already-opened libcuda (RTLD_NOLOAD), so the library stays loadable with no driver.
struct StreamApi {
  CUresult (*get_device)(CUstream, CUdevice*) = nullptr;  // CUDA >= 12.8
  CUresult (*get_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*push)(CUcontext) = nullptr;
  CUresult (*pop)(CUcontext*) = nullptr;
  CUresult (*ctx_device)(CUdevice*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  bool ok = false;
};

const StreamApi& Streams() {
  static const StreamApi api = [] {
    StreamApi a;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) return a;
    a.get_device = reinterpret_cast<decltype(a.get_device)>(dlsym(lib, "cuStreamGetDevice"));
    a.get_ctx = reinterpret_cast<decltype(a.get_ctx)>(dlsym(lib, "cuStreamGetCtx"));
    a.push = reinterpret_cast<decltype(a.push)>(dlsym(lib, "cuCtxPushCurrent_v2"));
    a.pop = reinterpret_cast<decltype(a.pop)>(dlsym(lib, "cuCtxPopCurrent_v2"));
    a.ctx_device = reinterpret_cast<decltype(a.ctx_device)>(dlsym(lib, "cuCtxGetDevice"));
    a.device_get = reinterpret_cast<decltype(a.device_get)>(dlsym(lib, "cuDeviceGet"));
    a.is_capturing = reinterpret_cast<decltype(a.is_capturing)>(dlsym(lib, "cuStreamIsCapturing"));
    a.ok = a.device_get && a.is_capturing &&
           (a.get_device || (a.get_ctx && a.push && a.pop && a.ctx_device));
    return a;
  }();
  return api;
}

}  // namespace

Status CheckStream(const Engine& engine, void* stream, int device) {
  const uintptr_t s = reinterpret_cast<uintptr_t>(stream);
  // NULL, CU_STREAM_LEGACY (1), CU_STREAM_PER_THREAD (2): the current context's streams.
  if (s <= 2 || engine.config().dry_run) return Status::Ok();
  auto driver = runtime::Driver();
  if (!driver.ok()) return Status::Ok();  // the op reports NoDriver itself
  const StreamApi& api = Streams();
  if (!api.ok) return Status::Ok();
  // The last stream this thread validated, per device: the hot path makes no driver call.
  // (A stream destroyed and recreated at the same address on another device then fails at
  // launch with a CUDA error instead of here.)
  thread_local void* last_stream = nullptr;
  thread_local int last_device = -1;
  if (stream == last_stream && device == last_device) return Status::Ok();
  // Queries like cuStreamGetDevice are not allowed on a capturing stream (they would invalidate
  // the capture); cuStreamIsCapturing is. A captured launch is checked when the graph runs.
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (api.is_capturing(static_cast<CUstream>(stream), &capture) != CUDA_SUCCESS ||
      capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return Status::Ok();
  CUdevice dev = -1;
  CUresult rc;
  if (api.get_device) {
    rc = api.get_device(static_cast<CUstream>(stream), &dev);
  } else {
    CUcontext ctx = nullptr;
    rc = api.get_ctx(static_cast<CUstream>(stream), &ctx);
    if (rc == CUDA_SUCCESS && (rc = api.push(ctx)) == CUDA_SUCCESS) {
      rc = api.ctx_device(&dev);
      CUcontext popped;
      api.pop(&popped);
    }
  }
  if (rc != CUDA_SUCCESS)
    return runtime::CudaStatus(rc, fmt::format("stream {}: not a usable CUDA stream", stream));
  CUdevice want = -1;
  if (api.device_get(&want, device) != CUDA_SUCCESS)
    return Status::InvalidArgument(fmt::format("tensors are on cuda:{}, no such device", device));
  if (dev != want)
    return Status::InvalidArgument(
        fmt::format("stream {} belongs to cuda:{} but the tensors are on cuda:{}; pass a stream "
                    "of the tensors' device",
                    stream, static_cast<int>(dev), device));
  last_stream = stream;
  last_device = device;
  return Status::Ok();
}

}  // namespace flashjit::capi
