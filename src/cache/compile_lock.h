// CompileLock: one process at a time compiles a given cache key.
//
// Many processes (one per GPU) may start cold on one cache at once. Before compiling a key that
// the cache does not hold, a process takes an exclusive flock(2) on "<cache dir>/locks/<key>.lock";
// the others wait for it, then find the kernel in the cache instead of compiling it again.
//
// The lock is an OS lock on an open file description: it is released when the holder unlocks,
// closes the file, exits or is killed (kill -9 included), so a crashed compiler never leaves a
// lock that blocks anyone. Lock files themselves are left in place (an empty file is harmless;
// unlinking one while another process waits on it would let two processes in at once).
//
// Thread-safety: each Acquire opens its own file description, so two threads of one process
// exclude each other too; callers still serialise keys within a process (Engine's in_flight_).
#pragma once

#include <flashjit/status.h>

#include <string>

namespace flashjit::cache {

class CompileLock {
 public:
  enum class Outcome {
    kAcquired,     // we hold the lock: compile, publish, then let it go
    kUnavailable,  // no lock possible (read-only dir, no locks dir): compile without one
    kTimedOut,     // a live peer held it longer than the timeout: compile without one
  };

  CompileLock() = default;
  ~CompileLock() { Release(); }
  CompileLock(CompileLock&& o) noexcept : fd_(o.fd_), outcome_(o.outcome_) { o.fd_ = -1; }
  CompileLock& operator=(CompileLock&& o) noexcept {
    if (this != &o) {
      Release();
      fd_ = o.fd_;
      outcome_ = o.outcome_;
      o.fd_ = -1;
    }
    return *this;
  }
  CompileLock(const CompileLock&) = delete;

  // Waits until this process holds the lock for `key` in `cache_dir`, or `timeout_ms` passes.
  // `*waited` is set when another holder made us wait (the caller should then look in the cache
  // again before compiling). Never fails: when no lock can be taken the outcome says why.
  static CompileLock Acquire(const std::string& cache_dir, const std::string& key, int timeout_ms,
                             bool* waited);

  Outcome outcome() const { return outcome_; }
  bool held() const { return fd_ >= 0; }
  void Release();

  // "<cache_dir>/locks/<key>.lock"
  static std::string PathFor(const std::string& cache_dir, const std::string& key);

 private:
  int fd_ = -1;
  Outcome outcome_ = Outcome::kUnavailable;
};

}  // namespace flashjit::cache
