// KernelDb: one SQLite file of compiled kernels (the writable cache, or a read-only bundle).
//
// Thread-safe: calls on one KernelDb are serialised by its mutex; several processes may use
// one file at once (WAL, busy timeout, publish with INSERT OR IGNORE, schema created once).
//
// What is never returned: a row whose cubin fails its SHA-256 or size check, or whose key is not
// the hash of the row's own spec, arch, versions and options (a row filed under the wrong key).
// Such a row is reported once, deleted where writable, and treated as a miss.
//
// Damage to the file itself (garbage, truncation: SQLITE_CORRUPT / SQLITE_NOTADB), found at open
// or by any later read or write, is reported once: a writable file is moved aside to
// "<path>.corrupt-<time>" and a fresh one takes its place (the failed call is retried once);
// a read-only file is disabled (every Get is a miss). A schema newer than this library's is
// refused (kUnsupported) and left untouched.
//
// Journal: WAL by default. FLASHJIT_CACHE_JOURNAL=delete selects SQLite's rollback journal for
// file systems where WAL's shared memory is unsafe (NFS, SMB); it is also chosen automatically
// when the file lies on NFS or SMB/CIFS. See docs/RELIABILITY.md.
#pragma once

#include <flashjit/status.h>
#include <sqlite3.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace flashjit::cache {

inline constexpr int kSchemaVersion = 1;

struct CacheEntry {
  std::string key, name, op, arch, spec, lib_version, template_hash, nvrtc_version, options;
  std::vector<uint8_t> cubin;
  std::string cubin_sha256;
  int64_t cubin_size = 0;  // as stored; equals cubin.size() for a verified row
  double compile_ms = 0;
  int registers = -1, spill_bytes = -1, stack_bytes = -1, static_smem = -1;
  std::string log;
  int64_t created_at = 0, last_used = 0, use_count = 0;
};

// Why a row read with its blob is not trustworthy (size, SHA-256, key vs. its own metadata);
// empty when it is.
std::string RowProblem(const CacheEntry& e);

struct VerifyReport {
  int64_t rows = 0;
  int64_t bad_rows = 0;  // cubin hash mismatch or metadata disagreeing with the blob
  std::vector<std::string> bad_keys;
  bool integrity_ok = true;  // PRAGMA integrity_check
  std::string integrity_message;
};

class KernelDb {
 public:
  enum class Mode {
    kReadWrite,  // creates the file and schema if missing
    kReadOnly,   // fails if missing; never writes
    kImmutable,  // read-only and assumed unchanging (bundles): no locks taken
  };

  static Result<std::unique_ptr<KernelDb>> Open(const std::string& path, Mode mode);
  ~KernelDb();

  const std::string& path() const { return path_; }
  bool writable() const { return mode_ == Mode::kReadWrite; }
  // "wal" or "delete" for writable files; "" otherwise.
  const std::string& journal() const { return journal_; }
  // How many times damage to the file was found (and, where writable, the file replaced).
  int64_t recoveries() const;

  // The entry for `key` with a verified cubin, or nullopt.
  Result<std::optional<CacheEntry>> Get(const std::string& key);
  // Publishes `entry` (INSERT OR IGNORE: a row already there wins; both are the same kernel).
  Status Put(const CacheEntry& entry);
  // Bumps use_count and last_used; failures are ignored (best effort on read-only files).
  void Touch(const std::string& key);
  Status Delete(const std::string& key);
  // Deletes every row. Clear, GarbageCollect and DeleteOtherVersions give the freed pages back to
  // the file system (VACUUM, then a WAL checkpoint) when they removed something; that step is
  // best effort (another process reading the file can hold it off) and only logs a warning.
  Status Clear();
  // Every row without cubin and log, ordered by name.
  Result<std::vector<CacheEntry>> List();
  // Every verified row with its cubin (export); `arch_filter` empty: every arch.
  Result<std::vector<CacheEntry>> ListFull(const std::string& arch_filter);
  Result<VerifyReport> Verify(bool delete_bad);
  // Deletes least-recently-used rows until the sum of cubin sizes is at most `max_bytes`.
  Result<int64_t> GarbageCollect(int64_t max_bytes);
  // Deletes every row whose library version, template hash or NVRTC version differs from the
  // given ones: kernels that a library of exactly those versions can never serve. Returns the
  // number of rows deleted.
  Result<int64_t> DeleteOtherVersions(const std::string& lib_version,
                                      const std::string& template_hash,
                                      const std::string& nvrtc_version);

  Result<std::map<std::string, std::string>> ReadMeta();
  Status WriteMeta(const std::map<std::string, std::string>& meta);

 private:
  KernelDb(sqlite3* db, std::string path, Mode mode)
      : db_(db), path_(std::move(path)), mode_(mode) {}
  static Result<std::unique_ptr<KernelDb>> OpenOnce(const std::string& path, Mode mode);
  Status InitSchema();
  // After a failed call with SQLite code `rc`: when it means the file is damaged, report it,
  // replace (writable) or disable (read-only) the file, and return true if the call may be
  // retried. REQUIRES: mu_ held.
  bool RecoverLocked(int rc, const std::string& what);
  Result<std::optional<CacheEntry>> GetLocked(const std::string& key, int* rc);
  Status PutLocked(const CacheEntry& entry, int* rc);
  // Rewrites the file without its free pages and truncates the WAL. REQUIRES: mu_ held.
  void ReclaimSpaceLocked();

  mutable std::mutex mu_;
  sqlite3* db_;
  std::string path_;
  Mode mode_;
  std::string journal_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool disabled_ = false;  // a damaged read-only file: every Get is a miss
  int64_t recoveries_ = 0;
};

}  // namespace flashjit::cache
