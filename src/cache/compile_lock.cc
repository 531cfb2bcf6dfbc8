#include "src/cache/compile_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <thread>

namespace flashjit::cache {

std::string CompileLock::PathFor(const std::string& cache_dir, const std::string& key) {
  return cache_dir + "/locks/" + key + ".lock";
}

CompileLock CompileLock::Acquire(const std::string& cache_dir, const std::string& key,
                                 int timeout_ms, bool* waited) {
  *waited = false;
  CompileLock lock;
  // Keys are hex digests; anything else must not become a path.
  if (cache_dir.empty() || key.empty() ||
      !std::all_of(key.begin(), key.end(), [](char c) { return std::isxdigit(uint8_t(c)); }))
    return lock;
  const std::string dir = cache_dir + "/locks";
  if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) return lock;
  const std::string path = PathFor(cache_dir, key);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);  // flock needs no write access
  if (fd < 0) return lock;
  // Poll rather than block, so that a live but stuck peer cannot hold us forever. The sleep
  // grows from 1 ms to 25 ms: a compile takes ~100 ms or more, so waiters wake soon after.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int sleep_us = 1000;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      lock.fd_ = fd;
      lock.outcome_ = Outcome::kAcquired;
      return lock;
    }
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {  // e.g. ENOLCK on a file system without locks
      close(fd);
      return lock;
    }
    *waited = true;
    if (std::chrono::steady_clock::now() >= deadline) {
      close(fd);
      lock.outcome_ = Outcome::kTimedOut;
      return lock;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    sleep_us = std::min(sleep_us * 2, 25000);
  }
}

void CompileLock::Release() {
  if (fd_ < 0) return;
  flock(fd_, LOCK_UN);
  close(fd_);
  fd_ = -1;
}

}  // namespace flashjit::cache
