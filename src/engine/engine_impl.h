// Engine::Impl: the only place that knows a cache and a compiler exist.
#pragma once

#include <flashjit/engine.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <type_traits>
#include <unordered_map>

#include "src/cache/bundle.h"
#include "src/cache/kernel_db.h"
#include "src/runtime/kernel.h"

namespace flashjit {

// A fixed-size key for the launch path: an op's trivially-copyable typed spec plus the device.
// Looking it up allocates nothing.
struct FastKey {
  static constexpr size_t kMaxBytes = 48;
  uint32_t family = 0;
  int32_t device = 0;
  uint8_t bytes[kMaxBytes] = {};

  template <class TypedSpec>
  static FastKey Of(uint32_t family, int device, const TypedSpec& s) {
    static_assert(std::has_unique_object_representations_v<TypedSpec>,
                  "typed specs must have no padding: their bytes are the key");
    static_assert(sizeof(TypedSpec) <= kMaxBytes, "typed spec too large for FastKey");
    FastKey k;
    k.family = family;
    k.device = device;
    std::memcpy(k.bytes, &s, sizeof(TypedSpec));
    return k;
  }
  bool operator==(const FastKey& o) const {
    return family == o.family && device == o.device && !std::memcmp(bytes, o.bytes, kMaxBytes);
  }
};

struct FastKeyHash {
  size_t operator()(const FastKey& k) const;
};

class Engine::Impl {
 public:
  static Result<std::unique_ptr<Impl>> Create(const EngineOptions& options);

  const EngineConfig& config() const { return config_; }
  EngineStats stats() const;

  Result<std::string> ResolveArch(const std::string& arch, int device) const;
  Result<std::string> Key(const VariantSpec& spec, const std::string& arch) const;
  Result<KernelInfo> Build(const VariantSpec& spec, const std::string& arch);
  // The loaded kernel for `spec` on `device`; the pointer lives as long as the engine.
  Result<const runtime::Kernel*> GetKernel(const VariantSpec& spec, int device);

  // The writable (or read-only fallback) cache; NotFound when the engine has none.
  Result<cache::KernelDb*> WritableDb() const;
  // The bundle signature policy from the options (trusted keys, require_signed).
  const cache::BundleTrustPolicy& trust() const { return trust_; }

  // Launch-path lookup; nullptr on a miss.
  const runtime::Kernel* LookupFast(const FastKey& key) const;
  void RememberFast(const FastKey& key, const runtime::Kernel* kernel);

 private:
  // A cubin from cache or bundles, else compiled (once per key in this process).
  Result<cache::CacheEntry> Fetch(const VariantSpec& spec, const std::string& arch,
                                  const std::string& key, KernelInfo* info);
  Result<cache::CacheEntry> CompileAndPublish(const VariantSpec& spec, const std::string& arch,
                                              const std::string& key);
  // Looks `key` up in the cache and then the bundles; nullopt on a miss.
  std::optional<cache::CacheEntry> FindStored(const std::string& key, std::string* source);
  // Opens the cache in `dir`: writable, else read-only, else immutable, else none (one warning).
  void OpenCache(const std::string& dir);
  // Opens and checks each bundle against trust_; refused ones are skipped with a warning.
  void OpenBundles(const std::vector<std::string>& paths);

  EngineConfig config_;
  std::string cache_dir_;                // where kernels.db and locks/ live; empty when none
  std::unique_ptr<cache::KernelDb> db_;  // may be null
  struct Bundle {
    std::unique_ptr<cache::KernelDb> db;
    // key -> cubin SHA-256 of every row the content hash (and signature) covered when the bundle
    // was checked: a row that appears or changes later is never served.
    std::unordered_map<std::string, std::string> verified;
  };
  std::vector<Bundle> bundles_;
  cache::BundleTrustPolicy trust_;

  mutable std::mutex mu_;  // guards everything below except fast_
  std::condition_variable cv_;
  std::set<std::string> in_flight_;  // keys being fetched or compiled by some thread
  // Compiled binaries that could not be (or need not be) stored: read-only or no cache.
  std::map<std::string, cache::CacheEntry> memory_entries_;
  std::map<std::pair<std::string, int>, std::unique_ptr<runtime::Kernel>> loaded_;
  EngineStats stats_;

  mutable std::shared_mutex fast_mu_;
  std::unordered_map<FastKey, const runtime::Kernel*, FastKeyHash> fast_;
};

// Launch-path helper for ops: typed spec -> loaded kernel, allocating nothing on a hit.
// TypedSpec provides `static constexpr uint32_t kFamilyId` and `Result<VariantSpec> ToVariant()`.
template <class TypedSpec>
Result<const runtime::Kernel*> KernelFor(Engine& engine, const TypedSpec& spec, int device) {
  const FastKey key = FastKey::Of(TypedSpec::kFamilyId, device, spec);
  Engine::Impl& impl = engine.impl();
  if (const runtime::Kernel* hit = impl.LookupFast(key)) return hit;
  FLASHJIT_ASSIGN_OR_RETURN(VariantSpec variant, spec.ToVariant());
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, impl.GetKernel(variant, device));
  impl.RememberFast(key, kernel);
  return kernel;
}

}  // namespace flashjit
