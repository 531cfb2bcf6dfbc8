// The C ABI's error channel (per-thread last error), status names, versions and the registry of
// live handles.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "build_info.h"
#include "src/c_api/c_api_internal.h"

namespace flashjit::capi {
namespace {

thread_local std::string t_last_error;

std::mutex& RegistryMutex() {
  static std::mutex* mu = new std::mutex();  // never destroyed: usable during exit
  return *mu;
}
std::unordered_map<const void*, HandleKind>& Registry() {
  static auto* live = new std::unordered_map<const void*, HandleKind>();
  return *live;
}

}  // namespace

flashjit_status ToCStatus(StatusCode code) {
  int c = static_cast<int>(code);
  return c >= 0 && c <= static_cast<int>(StatusCode::kInternal) ? static_cast<flashjit_status>(c)
                                                                : FLASHJIT_INTERNAL;
}

flashjit_status SetError(flashjit_status code, const char* fn, std::string_view message) {
  try {
    t_last_error = fmt::format("{}: {}: {}", fn, flashjit_status_name(code), message);
  } catch (...) {
    // No memory for the message: keep the code.
  }
  return code;
}

flashjit_status SetError(const Status& status, const char* fn) {
  return SetError(ToCStatus(status.code()), fn, status.message());
}

void RegisterHandle(const void* handle, HandleKind kind) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry()[handle] = kind;
}

bool UnregisterHandle(const void* handle, HandleKind kind) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(handle);
  if (it == Registry().end() || it->second != kind) return false;
  Registry().erase(it);
  return true;
}

bool IsLive(const void* handle, HandleKind kind) {
  if (!handle) return false;
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(handle);
  return it != Registry().end() && it->second == kind;
}

std::shared_ptr<Engine> LookupEngine(const flashjit_engine* handle) {
  if (!handle) return nullptr;
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(handle);
  if (it == Registry().end() || it->second != HandleKind::kEngine) return nullptr;
  return handle->engine;  // copied under the lock: a concurrent destroy cannot free it mid-call
}

const char* HandleError(const void* handle, const char* what) {
  thread_local std::string msg;
  msg = handle ? fmt::format(
                     "{} handle {} is not live (destroyed, or not made by "
                     "flashjit_{}_create)",
                     what, handle, what)
               : fmt::format("{} handle is NULL", what);
  return msg.c_str();
}

bool CopyOut(const std::string& text, char* buf, size_t size, size_t* needed) {
  if (needed) *needed = text.size() + 1;
  if (!buf || size == 0) return buf == nullptr;
  size_t n = std::min(text.size(), size - 1);
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
  return n == text.size();
}

flashjit_status QueryResult(const std::string& text, char* buf, size_t size, size_t* needed,
                            const char* fn) {
  if (CopyOut(text, buf, size, needed)) return FLASHJIT_OK;
  return SetError(FLASHJIT_BUFFER_TOO_SMALL, fn,
                  fmt::format("output needs {} bytes, the buffer has {}", text.size() + 1, size));
}

}  // namespace flashjit::capi

extern "C" {

const char* flashjit_status_name(flashjit_status status) {
  switch (status) {
    case FLASHJIT_INVALID_HANDLE:
      return "InvalidHandle";
    case FLASHJIT_BUFFER_TOO_SMALL:
      return "BufferTooSmall";
    default:
      break;
  }
  int c = static_cast<int>(status);
  if (c < 0 || c > static_cast<int>(flashjit::StatusCode::kInternal)) return "Unknown";
  return flashjit::StatusCodeName(static_cast<flashjit::StatusCode>(c)).data();
}

const char* flashjit_last_error(void) { return flashjit::capi::t_last_error.c_str(); }

const char* flashjit_version(void) { return FLASHJIT_VERSION_STRING; }

int flashjit_abi_version(void) { return FLASHJIT_C_ABI_VERSION; }

}  // extern "C"
