// Helpers for the reliability tests: the 20 test variants, fake cache rows, and running the CLI
// as a child process (optionally as an unprivileged user or under a file-size limit).
#pragma once

#include <fcntl.h>
#include <flashjit/spec.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/cache/cache_key.h"
#include "src/cache/kernel_db.h"
#include "src/common/sha256.h"

namespace flashjit::test {

// Twenty distinct small rmsnorm variants (items 1..16 at 32 threads, items 1..4 at 64).
inline std::string VariantJson(int i) {
  const int threads = i < 16 ? 32 : 64, items = i < 16 ? i + 1 : i - 15;
  return R"({"op":"rmsnorm","dtype":"bf16","threads":)" + std::to_string(threads) + R"(,"items":)" +
         std::to_string(items) + R"(,"vec":8})";
}
inline VariantSpec Variant(int i) {
  auto s = VariantSpec::FromJson(VariantJson(i));
  if (!s.ok()) throw std::runtime_error(s.status().ToString());
  return *s;
}
inline void WriteManifest(const std::string& path, int n) {
  nlohmann::json j = {{"name", "reliability"}, {"variants", nlohmann::json::array()}};
  for (int i = 0; i < n; ++i) j["variants"].push_back(nlohmann::json::parse(VariantJson(i)));
  std::ofstream(path) << j.dump();
}

// A row for `spec` on sm_90a whose key is right and whose "cubin" is `size` bytes of `fill`:
// enough for everything but loading it on a GPU.
inline cache::CacheEntry FakeEntry(const VariantSpec& spec, size_t size, uint8_t fill) {
  cache::KeyInputs in = cache::CurrentKeyInputs(spec, "sm_90a");
  cache::CacheEntry e;
  e.key = cache::CacheKey(in);
  e.name = spec.name();
  e.op = spec.op();
  e.arch = "sm_90a";
  e.spec = spec.canonical_json();
  e.lib_version = in.lib_version;
  e.template_hash = in.template_hash;
  e.nvrtc_version = in.nvrtc_version;
  e.options = nlohmann::json(in.options).dump();
  e.cubin.assign(size, fill);
  for (size_t i = 0; i < size; i += 97) e.cubin[i] = static_cast<uint8_t>(i * 31 + fill);
  e.cubin_sha256 = Sha256Hex(e.cubin.data(), e.cubin.size());
  e.cubin_size = static_cast<int64_t>(size);
  return e;
}

struct ChildOptions {
  bool as_nobody = false;     // setuid(65534) first when running as root
  rlim_t max_file_bytes = 0;  // RLIMIT_FSIZE (SIGXFSZ ignored: writes fail with EFBIG)
  bool discard_output = false;
};

// Starts `/bin/sh -c command` with stdout+stderr on a pipe (returned in *out_fd, or -1).
inline pid_t StartShell(const std::string& command, const ChildOptions& o, int* out_fd) {
  int fds[2] = {-1, -1};
  if (!o.discard_output && pipe(fds) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    int out = o.discard_output ? open("/dev/null", O_WRONLY) : fds[1];
    dup2(out, 1);
    dup2(out, 2);
    if (!o.discard_output) close(fds[0]);
    if (o.max_file_bytes) {
      signal(SIGXFSZ, SIG_IGN);
      struct rlimit r = {o.max_file_bytes, o.max_file_bytes};
      setrlimit(RLIMIT_FSIZE, &r);
    }
    if (o.as_nobody && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(126);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (!o.discard_output) close(fds[1]);
  *out_fd = o.discard_output ? -1 : fds[0];
  return pid;
}

struct ShellResult {
  int code = -1;
  std::string out;  // stdout and stderr together
};

inline ShellResult RunShell(const std::string& command, const ChildOptions& o = {}) {
  int fd = -1;
  pid_t pid = StartShell(command, o, &fd);
  ShellResult r;
  std::array<char, 4096> buf;
  for (ssize_t n; fd >= 0 && (n = read(fd, buf.data(), buf.size())) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    r.out.append(buf.data(), static_cast<size_t>(n));
  }
  if (fd >= 0) close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// The CLI with a clean environment: warnings on, no arch or bundles from the caller.
inline std::string CliCommand(const std::string& args, const std::string& env = "") {
  return "env -u FLASHJIT_ARCH -u FLASHJIT_BUNDLES -u FLASHJIT_CACHE_DIR "
         "FLASHJIT_LOG_LEVEL=warn " +
         env + " " FLASHJIT_CLI_PATH " " + args;
}

inline int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = 0; (at = text.find(needle, at)) != std::string::npos; at += needle.size()) ++n;
  return n;
}

}  // namespace flashjit::test
