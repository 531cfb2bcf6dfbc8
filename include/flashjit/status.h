// Status and Result<T>: the one error type of flashjit. No exception crosses the public API.
//
// A Status is cheap on success (no allocation). An error carries a code and a message that names
// the argument, what was wrong with it and what is allowed.
#pragma once

#include <flashjit/export.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace flashjit {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // bad input from the caller: shape, dtype, spec field, option
  kNotFound = 2,          // a key, file or kernel that does not exist
  kUnsupported = 3,       // a valid request this build or device cannot serve
  kCompileError = 4,      // NVRTC rejected the rendered source; message holds the full log
  kCudaError = 5,         // the CUDA driver returned an error
  kNoDriver = 6,          // libcuda.so.1 could not be opened, or no GPU is visible
  kIOError = 7,           // file system or database failure
  kCorruption = 8,        // stored data failed a check (hash, schema, manifest)
  kPermissionDenied = 9,  // refused by policy (unsigned bundle, read-only cache)
  kInternal = 10,         // a bug in flashjit
};

FLASHJIT_API std::string_view StatusCodeName(StatusCode code);

class FLASHJIT_API Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status CompileError(std::string m) { return {StatusCode::kCompileError, std::move(m)}; }
  static Status CudaError(std::string m) { return {StatusCode::kCudaError, std::move(m)}; }
  static Status NoDriver(std::string m) { return {StatusCode::kNoDriver, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // The message without the code; empty when ok().
  const std::string& message() const;
  // "InvalidArgument: <message>" or "OK".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(std::string_view context) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;  // null when OK: success costs nothing
};

// Holds either a value or a non-OK Status.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {
    if (status_.ok()) status_ = Status::Internal("Result constructed from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok()
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace flashjit

#define FLASHJIT_CONCAT_INNER(a, b) a##b
#define FLASHJIT_CONCAT(a, b) FLASHJIT_CONCAT_INNER(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define FLASHJIT_RETURN_IF_ERROR(expr)       \
  do {                                       \
    ::flashjit::Status _fj_status = (expr);  \
    if (!_fj_status.ok()) return _fj_status; \
  } while (0)

// `FLASHJIT_ASSIGN_OR_RETURN(auto x, MakeX());`
#define FLASHJIT_ASSIGN_OR_RETURN(lhs, expr) \
  FLASHJIT_ASSIGN_OR_RETURN_IMPL(FLASHJIT_CONCAT(_fj_result_, __LINE__), lhs, expr)
#define FLASHJIT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()
