// Engine::Impl: opening the writable cache and the bundle layers, and looking kernels up there.
#include <fmt/format.h>

#include <filesystem>

#include "src/cache/bundle.h"
#include "src/common/log.h"
#include "src/engine/engine_impl.h"

namespace flashjit {

void Engine::Impl::OpenCache(const std::string& dir) {
  EngineConfig& c = config_;
  const std::string path = dir + "/kernels.db";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto rw = cache::KernelDb::Open(path, cache::KernelDb::Mode::kReadWrite);
  if (rw.ok()) {
    db_ = std::move(*rw);
    cache_dir_ = dir;
    c.cache_path = path;
    c.cache_writable = true;
    c.cache_journal = db_->journal();
    return;
  }
  if (!std::filesystem::exists(path, ec)) {
    c.cache_warning = fmt::format("cannot create kernel cache in {} ({}); in-memory only", dir,
                                  rw.status().message());
    log::Warn("{}", c.cache_warning);
    return;
  }
  // A file we cannot write (read-only file, directory or mount): use what is there. Read-only
  // WAL access needs the -shm file; where that cannot be created, open it as immutable (nobody
  // can be writing a file that this process may not even lock).
  auto ro = cache::KernelDb::Open(path, cache::KernelDb::Mode::kReadOnly);
  if (!ro.ok() && ro.status().code() != StatusCode::kUnsupported)
    ro = cache::KernelDb::Open(path, cache::KernelDb::Mode::kImmutable);
  if (ro.ok()) {
    db_ = std::move(*ro);
    c.cache_path = path;
    c.cache_warning = fmt::format(
        "kernel cache {} is not writable ({}); using it read-only, new kernels stay in memory",
        path, rw.status().message());
  } else {
    c.cache_warning = fmt::format("kernel cache {} unusable ({}; read-only: {}); in-memory only",
                                  path, rw.status().message(), ro.status().message());
  }
  log::Warn("{}", c.cache_warning);
}

void Engine::Impl::OpenBundles(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    auto b = cache::KernelDb::Open(path, cache::KernelDb::Mode::kImmutable);
    Status s = b.ok() ? cache::CheckBundle(**b, "", trust_).status() : b.status();
    Bundle bundle;
    if (s.ok()) {
      bundle.db = std::move(*b);
      auto rows = bundle.db->List();
      if (rows.ok()) {
        for (const auto& e : *rows) bundle.verified[e.key] = e.cubin_sha256;
      } else {
        s = rows.status();
      }
    }
    if (!s.ok()) {
      log::Warn("bundle {} not used: {}", path, s.message());
      continue;
    }
    config_.bundles.push_back(path);
    bundles_.push_back(std::move(bundle));
  }
}

std::optional<cache::CacheEntry> Engine::Impl::FindStored(const std::string& key,
                                                          std::string* source) {
  if (db_) {
    auto got = db_->Get(key);
    if (!got.ok()) log::Warn("kernel cache read failed ({}); falling back", got.status().message());
    if (got.ok() && got->has_value()) {
      db_->Touch(key);
      *source = "cache";
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.cache_hits;
      return std::move(**got);
    }
  }
  for (Bundle& b : bundles_) {
    auto it = b.verified.find(key);
    if (it == b.verified.end()) continue;
    auto got = b.db->Get(key);
    if (!got.ok() || !got->has_value() || (*got)->cubin_sha256 != it->second) continue;
    *source = "bundle:" + b.db->path();
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.bundle_hits;
    return std::move(**got);
  }
  return std::nullopt;
}

}  // namespace flashjit
