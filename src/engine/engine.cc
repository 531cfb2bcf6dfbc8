#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "build_info.h"
#include "src/cache/bundle.h"
#include "src/cache/cache_key.h"
#include "src/cache/compile_lock.h"
#include "src/codegen/embedded_templates.h"
#include "src/codegen/render.h"
#include "src/common/log.h"
#include "src/common/sha256.h"
#include "src/compile/compiler.h"
#include "src/engine/engine_impl.h"
#include "src/runtime/driver.h"
#include "src/spec/family.h"

namespace flashjit {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool EnvFlag(const char* name) {
  std::string v = Env(name);
  return v == "1" || v == "true" || v == "yes";
}

std::string DefaultCacheDir() {
  if (std::string d = Env("FLASHJIT_CACHE_DIR"); !d.empty()) return d;
  if (std::string x = Env("XDG_CACHE_HOME"); !x.empty()) return x + "/flashjit";
  if (std::string h = Env("HOME"); !h.empty()) return h + "/.cache/flashjit";
  return "";
}

std::vector<std::string> SplitPaths(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

size_t FastKeyHash::operator()(const FastKey& k) const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  mix(&k.family, sizeof(k.family));
  mix(&k.device, sizeof(k.device));
  mix(k.bytes, sizeof(k.bytes));
  return static_cast<size_t>(h);
}

Result<std::unique_ptr<Engine::Impl>> Engine::Impl::Create(const EngineOptions& in) {
  EngineOptions o = in;
  if (o.read_environment) {
    if (o.arch.empty()) o.arch = Env("FLASHJIT_ARCH");
    if (o.cuda_include_dir.empty()) o.cuda_include_dir = Env("FLASHJIT_CUDA_INCLUDE_DIR");
    if (o.dump_dir.empty()) o.dump_dir = Env("FLASHJIT_DUMP_DIR");
    o.disable_jit = o.disable_jit || EnvFlag("FLASHJIT_DISABLE_JIT");
    o.always_compile = o.always_compile || EnvFlag("FLASHJIT_ALWAYS_COMPILE");
    o.dry_run = o.dry_run || EnvFlag("FLASHJIT_DRY_RUN");
    for (const std::string& b : SplitPaths(Env("FLASHJIT_BUNDLES"))) o.bundles.push_back(b);
  }
  if (!o.arch.empty())
    FLASHJIT_RETURN_IF_ERROR(compile::ValidateArch(o.arch).WithContext("engine option 'arch'"));

  auto impl = std::unique_ptr<Impl>(new Impl());
  EngineConfig& c = impl->config_;
  c.library_version = FLASHJIT_VERSION_STRING;
  c.template_hash = codegen::TemplateSetHash();
  c.nvrtc_version = compile::NvrtcVersion();
  c.arch = o.arch;
  c.disable_jit = o.disable_jit;
  c.always_compile = o.always_compile;
  c.dry_run = o.dry_run;
  if (o.dry_run && o.arch.empty())
    return Status::InvalidArgument(
        "engine option 'dry_run' needs 'arch' (or FLASHJIT_ARCH), e.g. sm_90a: a dry run loads "
        "nothing onto a device, so the target cannot be read from one");
  c.dump_dir = o.dump_dir;
  if (auto inc = compile::FindCudaIncludeDir(o.cuda_include_dir); inc.ok())
    c.cuda_include_dir = *inc;

  if (std::string w = Env("FLASHJIT_COMPILE_WAIT_S"); !w.empty() && o.read_environment) {
    char* end = nullptr;
    double secs = std::strtod(w.c_str(), &end);
    if (end == w.c_str() || *end || !(secs >= 0) || secs > 86400)
      return Status::InvalidArgument(
          fmt::format("FLASHJIT_COMPILE_WAIT_S=\"{}\": expected seconds in [0, 86400]", w));
    o.compile_wait_ms = static_cast<int>(secs * 1000);
  }
  if (o.compile_wait_ms < 0)
    return Status::InvalidArgument(
        fmt::format("engine option 'compile_wait_ms': must be >= 0, got {}", o.compile_wait_ms));
  c.compile_wait_ms = o.compile_wait_ms;
  if (o.read_environment) {
    for (const std::string& k : SplitPaths(Env("FLASHJIT_TRUSTED_KEYS")))
      o.trusted_bundle_keys.push_back(k);
    o.require_signed_bundles =
        o.require_signed_bundles || EnvFlag("FLASHJIT_REQUIRE_SIGNED_BUNDLES");
  }
  FLASHJIT_ASSIGN_OR_RETURN(
      impl->trust_, cache::MakeTrustPolicy(o.trusted_bundle_keys, o.require_signed_bundles));
  c.trusted_bundle_keys = o.trusted_bundle_keys;
  c.require_signed_bundles = o.require_signed_bundles;

  if (!o.disable_cache) {
    std::string dir =
        o.cache_dir.empty() ? (o.read_environment ? DefaultCacheDir() : "") : o.cache_dir;
    if (dir.empty()) {
      c.cache_warning = "no cache directory (HOME unset and no FLASHJIT_CACHE_DIR): in-memory only";
      log::Warn("{}", c.cache_warning);
    } else {
      impl->OpenCache(dir);
    }
  }
  impl->OpenBundles(o.bundles);
  return impl;
}

EngineStats Engine::Impl::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Result<std::string> Engine::Impl::ResolveArch(const std::string& arch, int device) const {
  if (!arch.empty()) {
    FLASHJIT_RETURN_IF_ERROR(compile::ValidateArch(arch));
    return arch;
  }
  if (!config_.arch.empty()) return config_.arch;
  auto info = runtime::GetDeviceInfo(device);
  if (!info.ok())
    return Status(info.status().code(),
                  fmt::format("no target arch: none given, FLASHJIT_ARCH unset, and device {} "
                              "cannot be asked ({}); pass an arch such as sm_90a",
                              device, info.status().message()));
  return info->arch();
}

Result<std::string> Engine::Impl::Key(const VariantSpec& spec, const std::string& arch) const {
  FLASHJIT_ASSIGN_OR_RETURN(std::string a, ResolveArch(arch, 0));
  return cache::CacheKey(cache::CurrentKeyInputs(spec, a));
}

Result<cache::CacheEntry> Engine::Impl::CompileAndPublish(const VariantSpec& spec,
                                                          const std::string& arch,
                                                          const std::string& key) {
  if (config_.disable_jit)
    return Status::NotFound(fmt::format(
        "kernel {} for {} (key {}) is not in the cache or any bundle, and JIT is disabled "
        "(FLASHJIT_DISABLE_JIT); prewarm it with `flashjit cache build`",
        spec.name(), arch, key));
  if (config_.cuda_include_dir.empty()) return compile::FindCudaIncludeDir("").status();
  FLASHJIT_ASSIGN_OR_RETURN(std::string source, codegen::Render(spec));
  compile::CompileRequest req{source, spec.name(), arch, key};
  auto compiled = compile::Compile(req, config_.cuda_include_dir);
  if (!config_.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(config_.dump_dir, ec);
    std::ofstream(config_.dump_dir + "/" + spec.name() + ".cu") << source;
    std::ofstream(config_.dump_dir + "/" + spec.name() + ".log")
        << (compiled.ok() ? compiled->log : compiled.status().message());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++(compiled.ok() ? stats_.compiles : stats_.compile_failures);
  }
  if (!compiled.ok()) return compiled.status();
  cache::KeyInputs in = cache::CurrentKeyInputs(spec, arch);
  cache::CacheEntry e;
  e.key = key;
  e.name = spec.name();
  e.op = spec.op();
  e.arch = arch;
  e.spec = spec.canonical_json();
  e.lib_version = in.lib_version;
  e.template_hash = in.template_hash;
  e.nvrtc_version = in.nvrtc_version;
  e.options = nlohmann::json(in.options).dump();
  e.cubin = std::move(compiled->cubin);
  e.cubin_sha256 = Sha256Hex(e.cubin.data(), e.cubin.size());
  e.cubin_size = static_cast<int64_t>(e.cubin.size());
  e.compile_ms = compiled->compile_ms;
  e.registers = compiled->registers;
  e.spill_bytes = compiled->spill_bytes;
  e.stack_bytes = compiled->stack_bytes;
  e.static_smem = compiled->static_smem_bytes;
  e.log = compiled->log;
  if (db_ && db_->writable()) {
    Status s = db_->Put(e);
    if (!s.ok()) {
      bool first;
      {
        std::lock_guard<std::mutex> lock(mu_);
        first = stats_.store_failures++ == 0;
      }
      // Once per engine: a full disk fails every insert, and each kernel still works from memory.
      if (first)
        log::Warn(
            "could not store kernel {} in the cache ({}); using it from memory (further "
            "store failures are counted in EngineStats::store_failures, not logged)",
            e.name, s.message());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  memory_entries_[key] = e;
  return e;
}

Result<cache::CacheEntry> Engine::Impl::Fetch(const VariantSpec& spec, const std::string& arch,
                                              const std::string& key, KernelInfo* info) {
  auto t0 = std::chrono::steady_clock::now();
  info->key = key;
  info->name = spec.name();
  info->arch = arch;
  info->op = spec.op();
  auto fill = [&](const cache::CacheEntry& e, std::string source) {
    info->source = std::move(source);
    info->compile_ms = e.compile_ms;
    info->registers = e.registers;
    info->spill_bytes = e.spill_bytes;
    info->stack_bytes = e.stack_bytes;
    info->static_smem = e.static_smem;
    info->cubin_size = static_cast<int64_t>(e.cubin.size());
    info->fetch_ms = MsSince(t0);
  };
  if (config_.always_compile) {
    FLASHJIT_ASSIGN_OR_RETURN(cache::CacheEntry e, CompileAndPublish(spec, arch, key));
    fill(e, "compiled");
    return e;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = memory_entries_.find(key); it != memory_entries_.end()) {
      fill(it->second, "memory");
      return it->second;
    }
  }
  std::string source;
  if (auto found = FindStored(key, &source)) {
    fill(*found, source);
    return std::move(*found);
  }
  // A miss: claim the key across processes so that one of them compiles it and the others find
  // it in the cache. The claim is an OS file lock, released even if its holder is killed.
  cache::CompileLock claim;
  if (db_ && db_->writable() && !cache_dir_.empty() && !config_.disable_jit) {
    bool waited = false;
    claim = cache::CompileLock::Acquire(cache_dir_, key, config_.compile_wait_ms, &waited);
    if (waited) {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.compile_waits;
    }
    if (claim.outcome() == cache::CompileLock::Outcome::kTimedOut)
      log::Warn("waited {} ms for another process compiling {} ({}); compiling it here too",
                config_.compile_wait_ms, spec.name(), key);
    // Whoever held the claim before us has published (or failed): look again.
    if (auto found = FindStored(key, &source)) {
      fill(*found, source);
      return std::move(*found);
    }
  }
  FLASHJIT_ASSIGN_OR_RETURN(cache::CacheEntry e, CompileAndPublish(spec, arch, key));
  fill(e, "compiled");
  return e;
}

Result<KernelInfo> Engine::Impl::Build(const VariantSpec& spec, const std::string& arch_in) {
  FLASHJIT_ASSIGN_OR_RETURN(std::string arch, ResolveArch(arch_in, 0));
  const std::string key = cache::CacheKey(cache::CurrentKeyInputs(spec, arch));
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !in_flight_.count(key); });
  in_flight_.insert(key);
  lock.unlock();
  KernelInfo info;
  auto entry = Fetch(spec, arch, key, &info);
  lock.lock();
  in_flight_.erase(key);
  cv_.notify_all();
  if (!entry.ok()) return entry.status();
  return info;
}

Result<const runtime::Kernel*> Engine::Impl::GetKernel(const VariantSpec& spec, int device) {
  FLASHJIT_ASSIGN_OR_RETURN(std::string arch, ResolveArch("", device));
  const std::string key = cache::CacheKey(cache::CurrentKeyInputs(spec, arch));
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (auto it = loaded_.find({key, device}); it != loaded_.end()) {
      ++stats_.memory_hits;
      return it->second.get();
    }
    if (!in_flight_.count(key)) break;
    cv_.wait(lock);
  }
  in_flight_.insert(key);
  lock.unlock();

  KernelInfo info;
  auto entry = Fetch(spec, arch, key, &info);
  Result<std::unique_ptr<runtime::Kernel>> kernel = Status::Internal("not loaded");
  if (entry.ok()) {
    const spec::OpFamily* family = spec::FindFamily(spec.op());
    std::vector<std::string> symbols;
    for (const spec::Entry& e : family->entries) symbols.push_back(e.symbol);
    if (config_.dry_run) {
      kernel = runtime::Kernel::Unloaded(symbols.size(), device, spec.name());
    } else {
      kernel = runtime::Kernel::Load(entry->cubin, symbols, device, spec.name());
    }
  }
  lock.lock();
  in_flight_.erase(key);
  cv_.notify_all();
  if (!entry.ok()) return entry.status();
  if (!kernel.ok()) return kernel.status();
  ++stats_.module_loads;
  runtime::Kernel* raw = kernel->get();
  loaded_[{key, device}] = std::move(*kernel);
  return raw;
}

const runtime::Kernel* Engine::Impl::LookupFast(const FastKey& key) const {
  std::shared_lock<std::shared_mutex> lock(fast_mu_);
  auto it = fast_.find(key);
  return it == fast_.end() ? nullptr : it->second;
}

void Engine::Impl::RememberFast(const FastKey& key, const runtime::Kernel* kernel) {
  std::unique_lock<std::shared_mutex> lock(fast_mu_);
  fast_.emplace(key, kernel);
}

// ---- Engine ---------------------------------------------------------------------------------

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Result<std::shared_ptr<Engine>> Engine::Create(const EngineOptions& options) {
  FLASHJIT_ASSIGN_OR_RETURN(auto impl, Impl::Create(options));
  return std::shared_ptr<Engine>(new Engine(std::move(impl)));
}

const EngineConfig& Engine::config() const { return impl_->config(); }
EngineStats Engine::stats() const { return impl_->stats(); }

Result<std::string> Engine::Key(const VariantSpec& spec, const std::string& arch) const {
  return impl_->Key(spec, arch);
}

Result<std::string> Engine::Render(const VariantSpec& spec) const { return codegen::Render(spec); }

Result<KernelInfo> Engine::Build(const VariantSpec& spec, const std::string& arch) {
  return impl_->Build(spec, arch);
}

Status Engine::Load(const VariantSpec& spec, int device) {
  return impl_->GetKernel(spec, device).status();
}

}  // namespace flashjit
