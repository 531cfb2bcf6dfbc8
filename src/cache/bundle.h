// Offline bundles: a SQLite file of the cache schema holding the kernels of one arch, plus a
// manifest in its meta table. Checks are exact (no prefix matches): library version, template
// hash, NVRTC version and arch must equal this build's, and every row's SHA-256, every row's key
// (against its own spec and versions) and the content hash over all rows must verify. A manifest
// may carry an Ed25519 signature (bundle_signature.h) that a BundleTrustPolicy checks.
#pragma once

#include <flashjit/status.h>

#include <cstdint>
#include <map>
#include <string>

#include "src/cache/bundle_signature.h"
#include "src/cache/kernel_db.h"

namespace flashjit::cache {

inline constexpr const char* kBundleFormat = "flashjit-bundle-1";

struct BundleManifest {
  std::string format, lib_version, template_hash, nvrtc_version, arch, content_hash;
  int64_t count = 0;
  int64_t created_at = 0;
  std::string signature, signer;  // hex Ed25519 signature and key id; empty when unsigned
  // After CheckBundle: "unsigned", "verified (key <id>)" or "not verified: <why>".
  std::string signature_state;
  std::map<std::string, std::string> ToMeta() const;
  // Strict: a missing field or a number that is not exactly a decimal integer is an error.
  static Result<BundleManifest> FromMeta(const std::map<std::string, std::string>& meta);
};

// Which signatures CheckBundle accepts. With no keys a signature cannot be checked: the bundle
// is accepted as if unsigned unless `require_signed`. With keys, a signed bundle must verify
// against one of them.
struct BundleTrustPolicy {
  std::vector<PublicKey> keys;
  bool require_signed = false;
};

// Loads every key file; the first that fails is the error.
Result<BundleTrustPolicy> MakeTrustPolicy(const std::vector<std::string>& key_files,
                                          bool require_signed);

// SHA-256 over "key:cubin_sha256\n" of every row, in key order.
Result<std::string> ContentHash(KernelDb& db);

// Writes every verified row of `arch` from `from` into a new bundle at `out_path` (replacing
// it atomically: written beside it, then renamed). Fails if no row matches.
// Signs the manifest with the Ed25519 private key in `sign_key_pem` when it is not empty.
Result<BundleManifest> ExportBundle(KernelDb& from, const std::string& arch,
                                    const std::string& out_path,
                                    const std::string& sign_key_pem = "");

// Checks a bundle's manifest against this build and its rows against the manifest.
// `expected_arch` empty accepts any arch. Every refusal says which field differs and how.
// Signature refusals are kPermissionDenied (not trusted / unsigned when required) or
// kCorruption (a trusted signer's signature that does not verify).
Result<BundleManifest> CheckBundle(KernelDb& bundle, const std::string& expected_arch,
                                   const BundleTrustPolicy& trust = {});

// Checks `path` (CheckBundle) and copies its rows into `into`. Returns rows added.
Result<int64_t> ImportBundle(const std::string& path, KernelDb& into,
                             const std::string& expected_arch, const BundleTrustPolicy& trust = {});

}  // namespace flashjit::cache
