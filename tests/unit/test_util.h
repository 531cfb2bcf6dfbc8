// Helpers for CPU unit tests: temporary directories and engines that need no GPU.
#pragma once

#include <flashjit/engine.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>

namespace flashjit::test {

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("flashjit-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// An engine for sm_90a that reads no environment; `cache_dir` empty = no cache.
inline std::shared_ptr<Engine> MakeTestEngine(const std::string& cache_dir, bool dry_run = true) {
  EngineOptions o;
  o.read_environment = false;
  o.arch = "sm_90a";
  o.dry_run = dry_run;
  o.cache_dir = cache_dir;
  o.disable_cache = cache_dir.empty();
  auto e = Engine::Create(o);
  if (!e.ok()) throw std::runtime_error(e.status().ToString());
  return *e;
}

}  // namespace flashjit::test
