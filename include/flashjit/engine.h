// Engine: owns the kernel cache, the compiler and the loaded modules. Thread-safe.
//
// An op asks the engine for a kernel by spec and gets a launchable handle; only the engine
// knows that a cache or a compiler exists. Lookup order for a variant on a device:
//   in-process map -> writable cache (SQLite) -> read-only bundles -> render + NVRTC compile.
// Each key is compiled at most once per process; concurrent callers wait for the first.
#pragma once

#include <flashjit/export.h>
#include <flashjit/spec.h>
#include <flashjit/status.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace flashjit {

struct FLASHJIT_API EngineOptions {
  // Directory of kernels.db. Empty: $FLASHJIT_CACHE_DIR, else $XDG_CACHE_HOME/flashjit, else
  // ~/.cache/flashjit.
  std::string cache_dir;
  // Keep compiled kernels in memory only (no database).
  bool disable_cache = false;
  // Read-only bundle files consulted after the writable cache (added to $FLASHJIT_BUNDLES,
  // a ':'-separated list).
  std::vector<std::string> bundles;
  // Target arch, e.g. "sm_90a". Empty: $FLASHJIT_ARCH, else the device's own.
  std::string arch;
  // CUDA include dir for NVRTC. Empty: $FLASHJIT_CUDA_INCLUDE_DIR, $CUDA_HOME, $CUDA_PATH, the
  // build's toolkit, /usr/local/cuda.
  std::string cuda_include_dir;
  // A cache miss is an error instead of a compile ($FLASHJIT_DISABLE_JIT=1).
  bool disable_jit = false;
  // Compile every variant, ignoring cached binaries ($FLASHJIT_ALWAYS_COMPILE=1).
  bool always_compile = false;
  // Write each rendered source and compile log here ($FLASHJIT_DUMP_DIR).
  std::string dump_dir;
  // Dry run ($FLASHJIT_DRY_RUN=1): ops validate, choose and build (compile or fetch) their
  // kernels but never load or launch them, and touch no device memory. With `arch` set this
  // needs no GPU: run a server's or a test suite's warm-up path on a build machine to prewarm
  // the cache with exactly the variants it uses.
  bool dry_run = false;
  // How long to wait for another process that is compiling the same kernel into the shared
  // cache before compiling it here as well ($FLASHJIT_COMPILE_WAIT_S). A peer that dies releases
  // its claim at once (an OS file lock), so this only bounds a live but stuck peer.
  int compile_wait_ms = 600000;
  // Public Ed25519 keys (PEM files) whose bundle signatures are trusted; added to
  // $FLASHJIT_TRUSTED_KEYS, a ':'-separated list. A signed bundle whose signer is not among them
  // is refused when any key is given.
  std::vector<std::string> trusted_bundle_keys;
  // Refuse bundles that are not signed by a trusted key, for FLASHJIT_BUNDLES layers and
  // ImportBundle alike ($FLASHJIT_REQUIRE_SIGNED_BUNDLES=1).
  bool require_signed_bundles = false;
  // Let the FLASHJIT_* environment fill options left at their defaults.
  bool read_environment = true;
};

// The options as resolved at creation, plus facts about this build.
struct FLASHJIT_API EngineConfig {
  std::string library_version;
  std::string template_hash;
  std::string nvrtc_version;
  std::string cuda_include_dir;  // empty when not found (compiles then fail with NotFound)
  std::string cache_path;        // kernels.db, or empty when in-memory
  bool cache_writable = false;
  std::string cache_warning;  // why the cache is read-only or in-memory, if it is
  std::vector<std::string> bundles;
  std::string arch;  // empty: each device's own
  bool disable_jit = false, always_compile = false, dry_run = false;
  std::string dump_dir;
  std::string cache_journal;  // "wal" or "delete" (FLASHJIT_CACHE_JOURNAL, NFS detection)
  int compile_wait_ms = 0;
  std::vector<std::string> trusted_bundle_keys;
  bool require_signed_bundles = false;
};

struct FLASHJIT_API EngineStats {
  int64_t compiles = 0;  // successful NVRTC compiles
  int64_t compile_failures = 0;
  int64_t memory_hits = 0;     // requests served by already-loaded kernels
  int64_t cache_hits = 0;      // binaries read from the writable cache
  int64_t bundle_hits = 0;     // binaries read from a bundle
  int64_t module_loads = 0;    // kernels made ready for launch (dry run: prepared, not loaded)
  int64_t compile_waits = 0;   // times this process waited for another one compiling a key
  int64_t store_failures = 0;  // compiled kernels the cache could not store (used from memory)
};

// What Build() produced or found.
struct FLASHJIT_API KernelInfo {
  std::string key, name, arch, op;
  std::string source;  // "compiled", "cache", "bundle:<path>"
  double compile_ms = 0;
  double fetch_ms = 0;  // time this call spent (cache read or compile)
  int registers = -1, spill_bytes = -1, stack_bytes = -1, static_smem = -1;
  int64_t cubin_size = 0;
};

// A row of the kernel cache (no binary).
struct FLASHJIT_API CachedKernel {
  std::string key, name, op, arch, spec, lib_version, nvrtc_version;
  bool current = false;  // built by this library, templates and NVRTC: usable by it
  int64_t cubin_size = 0;
  double compile_ms = 0;
  int registers = -1, spill_bytes = -1, stack_bytes = -1, static_smem = -1;
  int64_t created_at = 0, last_used = 0, use_count = 0;
};

struct FLASHJIT_API CacheVerifyReport {
  int64_t rows = 0, bad_rows = 0, removed = 0;
  bool integrity_ok = true;
  std::string integrity_message;
  std::vector<std::string> problems;  // "key name: what is wrong"
};

// A bundle's manifest and whether it passed every check.
struct FLASHJIT_API BundleInfo {
  std::string path, format, lib_version, template_hash, nvrtc_version, arch, content_hash;
  int64_t count = 0, created_at = 0;
  std::string signer;     // key id of the Ed25519 signer, empty when unsigned
  std::string signature;  // "unsigned", "verified (key <id>)" or "not verified: <why>"
  Status check;           // OK, or why this library refuses it
  std::vector<CachedKernel> kernels;
};

// Which bundle signatures to trust (see EngineOptions::trusted_bundle_keys).
struct FLASHJIT_API BundleTrust {
  std::vector<std::string> trusted_key_files;  // public (or private) Ed25519 PEM files
  bool require_signed = false;
};

// Reads and checks a bundle file without importing it.
FLASHJIT_API Result<BundleInfo> InspectBundle(const std::string& path,
                                              const BundleTrust& trust = {});

// Writes a new Ed25519 key pair: `private_pem` (mode 0600, refused if it exists) and
// `public_pem`. Returns the key id (16 hex digits of the public key's SHA-256).
FLASHJIT_API Result<std::string> GenerateBundleSigningKey(const std::string& private_pem,
                                                          const std::string& public_pem);

class FLASHJIT_API Engine {
 public:
  static Result<std::shared_ptr<Engine>> Create(const EngineOptions& options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const EngineConfig& config() const;
  EngineStats stats() const;

  // The cache key of `spec` for `arch` (empty: the configured arch, else device 0's).
  Result<std::string> Key(const VariantSpec& spec, const std::string& arch = "") const;

  // Renders the translation unit of `spec` (no compile).
  Result<std::string> Render(const VariantSpec& spec) const;

  // Finds `spec` in the cache or bundles, else compiles and publishes it. Needs no GPU.
  Result<KernelInfo> Build(const VariantSpec& spec, const std::string& arch = "");

  // Builds and loads `spec` on `device` so that the first launch pays nothing.
  Status Load(const VariantSpec& spec, int device);

  // ---- the writable cache (errors when the engine has none) ----
  Result<std::vector<CachedKernel>> ListCache() const;
  Result<CacheVerifyReport> VerifyCache(bool repair);
  // Evicts least-recently-used kernels until the cache holds at most `max_bytes` of cubins.
  Result<int64_t> GarbageCollectCache(int64_t max_bytes);
  // Removes the kernels this library can never serve: those built by another library version,
  // template set (which includes the code that renders specs) or NVRTC version, e.g. left by an
  // upgrade. Kernels of other archs stay. Returns the number removed. A cache directory shared
  // with another flashjit build loses that build's kernels (it recompiles them).
  Result<int64_t> PruneCache();
  Status ClearCache();
  // Writes the cache's kernels for `arch` to a bundle file, signed with the Ed25519 private key
  // in `sign_key_pem` when given.
  Result<BundleInfo> ExportBundle(const std::string& arch, const std::string& path,
                                  const std::string& sign_key_pem = "");
  // Checks a bundle (exact version, templates, NVRTC; `arch` if given; every hash; the signature
  // against this engine's trusted keys and require_signed_bundles) and copies its kernels into
  // the cache. Returns the number of kernels added.
  Result<int64_t> ImportBundle(const std::string& path, const std::string& arch = "");

  class Impl;
  Impl& impl() const { return *impl_; }  // for flashjit's own ops

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace flashjit
