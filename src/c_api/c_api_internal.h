// Internals of the C ABI (include/flashjit/flashjit.h): handle structs, the live-handle
// registry, the error channel, DLPack -> TensorView conversion and the stream check.
//
// Every exported function is a Guard() around a lambda that returns a Status, so that no C++
// exception crosses the boundary and every failure leaves a message for flashjit_last_error().
#pragma once

#include <flashjit/decode.h>
#include <flashjit/engine.h>
#include <flashjit/flashjit.h>
#include <flashjit/status.h>
#include <flashjit/tensor.h>

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

// A handle is a small struct that is never freed: destroy empties it and removes it from the
// registry, so a stale pointer can never alias a newer handle (it stays "destroyed" forever).
struct flashjit_engine {
  std::shared_ptr<flashjit::Engine> engine;
};

struct flashjit_batch_decode {
  std::shared_ptr<flashjit::Engine> engine;  // keeps the engine alive while the wrapper lives
  std::unique_ptr<flashjit::BatchDecode> decode;
  flashjit::BatchDecodeConfig config;
};

namespace flashjit::capi {

// ---- errors ----------------------------------------------------------------------------------

// Records "<fn>: <Code>: <message>" as this thread's last error and returns the C code.
flashjit_status SetError(flashjit_status code, const char* fn, std::string_view message);
flashjit_status SetError(const Status& status, const char* fn);
flashjit_status ToCStatus(StatusCode code);

// ---- handles ---------------------------------------------------------------------------------

enum class HandleKind : uint8_t { kEngine, kBatchDecode };
void RegisterHandle(const void* handle, HandleKind kind);
// True when `handle` was live and is now unregistered.
bool UnregisterHandle(const void* handle, HandleKind kind);
bool IsLive(const void* handle, HandleKind kind);

// The engine behind a live handle, or null (the handle is NULL, destroyed or foreign).
std::shared_ptr<Engine> LookupEngine(const flashjit_engine* handle);
const char* HandleError(const void* handle, const char* what);

// ---- strings ---------------------------------------------------------------------------------
// NULL -> "".
std::string Str(const char* s);
// The C ABI's ':'-separated lists (bundles, key files): "a:b::c" -> {a, b, c}; NULL -> {}.
std::vector<std::string> SplitColonList(const char* s);

// ---- tensors and streams ---------------------------------------------------------------------

// A required DLTensor -> view: kDLCUDA, lanes 1, a dtype flashjit knows, ndim <= 6, strides
// NULL (contiguous) or given, data + byte_offset.
Status FromDL(const DLTensor* t, const char* name, TensorView* view);
// Optional: NULL gives an empty view (data == nullptr).
Status FromDLOptional(const DLTensor* t, const char* name, TensorView* view);
Result<DType> FromDLType(DLDataType type, const char* name);

// The stream must belong to `device` (checked with the driver; skipped in a dry run, for the
// NULL/legacy/per-thread streams and on machines with no driver).
Status CheckStream(const Engine& engine, void* stream, int device);

// ---- buffers ---------------------------------------------------------------------------------

// snprintf-style copy of `text` into (buf, size); sets *needed. True when it fit (or buf was
// NULL: a size query).
bool CopyOut(const std::string& text, char* buf, size_t size, size_t* needed);
// For queries: FLASHJIT_BUFFER_TOO_SMALL (with a message) when a non-NULL buffer was short.
flashjit_status QueryResult(const std::string& text, char* buf, size_t size, size_t* needed,
                            const char* fn);

// ---- guards ----------------------------------------------------------------------------------

template <class F>
flashjit_status Guard(const char* fn, F&& body) noexcept {
  try {
    Status s = body();
    return s.ok() ? FLASHJIT_OK : SetError(s, fn);
  } catch (const std::bad_alloc&) {
    return SetError(FLASHJIT_INTERNAL, fn, "out of host memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return SetError(FLASHJIT_INTERNAL, fn, std::string("unexpected C++ exception: ") + e.what());
  } catch (...) {
    return SetError(FLASHJIT_INTERNAL, fn, "unexpected C++ exception of unknown type");
  }
}

// Guard plus the engine handle lookup: body(Engine&) -> Status.
template <class F>
flashjit_status WithEngine(const char* fn, flashjit_engine* handle, F&& body) noexcept {
  try {
    std::shared_ptr<Engine> engine = LookupEngine(handle);
    if (!engine) return SetError(FLASHJIT_INVALID_HANDLE, fn, HandleError(handle, "engine"));
    Status s = body(*engine);
    return s.ok() ? FLASHJIT_OK : SetError(s, fn);
  } catch (const std::bad_alloc&) {
    return SetError(FLASHJIT_INTERNAL, fn, "out of host memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return SetError(FLASHJIT_INTERNAL, fn, std::string("unexpected C++ exception: ") + e.what());
  } catch (...) {
    return SetError(FLASHJIT_INTERNAL, fn, "unexpected C++ exception of unknown type");
  }
}

}  // namespace flashjit::capi
