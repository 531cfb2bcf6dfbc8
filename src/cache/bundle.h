// Offline bundles: a SQLite file of the cache schema holding the kernels of one arch, plus a
// manifest in its meta table. Checks are exact (no prefix matches): library version, template
// hash, NVRTC version and arch must equal this build's, and every row's SHA-256 and the content
// hash over all rows must verify.
#pragma once

#include <flashjit/status.h>

#include <cstdint>
#include <map>
#include <string>

#include "src/cache/kernel_db.h"

namespace flashjit::cache {

inline constexpr const char* kBundleFormat = "flashjit-bundle-1";

struct BundleManifest {
  std::string format, lib_version, template_hash, nvrtc_version, arch, content_hash;
  int64_t count = 0;
  int64_t created_at = 0;
  std::map<std::string, std::string> ToMeta() const;
  static BundleManifest FromMeta(const std::map<std::string, std::string>& meta);
};

// SHA-256 over "key:cubin_sha256\n" of every row, in key order.
Result<std::string> ContentHash(KernelDb& db);

// Writes every verified row of `arch` from `from` into a new bundle at `out_path` (replacing
// it atomically: written beside it, then renamed). Fails if no row matches.
Result<BundleManifest> ExportBundle(KernelDb& from, const std::string& arch,
                                    const std::string& out_path);

// Checks a bundle's manifest against this build and its rows against the manifest.
// `expected_arch` empty accepts any arch. Every refusal says which field differs and how.
Result<BundleManifest> CheckBundle(KernelDb& bundle, const std::string& expected_arch);

// Checks `path` (CheckBundle) and copies its rows into `into`. Returns rows added.
Result<int64_t> ImportBundle(const std::string& path, KernelDb& into,
                             const std::string& expected_arch);

}  // namespace flashjit::cache
