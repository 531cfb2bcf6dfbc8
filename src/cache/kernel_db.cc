#include "src/cache/kernel_db.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include "schema_sql.h"
#include "src/cache/kernel_row.h"
#include "src/common/log.h"

namespace flashjit::cache {
namespace {

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

// WAL needs shared memory that network file systems do not provide safely.
bool OnNetworkFileSystem(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  struct statfs fs;
  if (statfs(dir.empty() ? "." : dir.c_str(), &fs) != 0) return false;
  const auto type = static_cast<unsigned long>(fs.f_type);
  return type == 0x6969 /*NFS*/ || type == 0x517B /*SMB*/ || type == 0xFF534D42 /*CIFS*/ ||
         type == 0xFE534D42 /*SMB2*/;
}

std::string ChooseJournal(const std::string& path) {
  const char* env = std::getenv("FLASHJIT_CACHE_JOURNAL");
  std::string v = env ? env : "";
  if (v == "wal" || v == "delete") return v;
  if (!v.empty()) log::Warn("FLASHJIT_CACHE_JOURNAL={} ignored; allowed: wal, delete", v);
  if (OnNetworkFileSystem(path)) {
    log::Info("kernel cache {} is on a network file system: using journal_mode=DELETE", path);
    return "delete";
  }
  return "wal";
}

Status CorruptionOrIo(sqlite3* db, int rc, std::string_view what) {
  Status s = SqliteError(db, rc, what);
  return IsCorruptionCode(rc) ? Status::Corruption(s.message()) : s;
}

}  // namespace

Result<std::unique_ptr<KernelDb>> KernelDb::OpenOnce(const std::string& path, Mode mode) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;  // our own mutex serialises use of this connection
  std::string uri = path;
  switch (mode) {
    case Mode::kReadWrite:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
    case Mode::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Mode::kImmutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
      uri = "file:" + path + "?immutable=1";
      break;
  }
  int rc = sqlite3_open_v2(uri.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = CorruptionOrIo(db, rc, "opening the kernel cache");
    sqlite3_close(db);
    return s;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, 30000);
  auto out = std::unique_ptr<KernelDb>(new KernelDb(db, path, mode));
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    out->dev_ = st.st_dev;
    out->ino_ = st.st_ino;
  }
  // Any read forces SQLite to look at the header: garbage files fail here. The statement is
  // finished before the schema is touched (an open read would block the switch to WAL).
  int64_t v = 0;
  {
    Statement version(db, "PRAGMA user_version");
    rc = version.Step();
    if (rc != SQLITE_ROW) return CorruptionOrIo(db, rc, "reading the schema version");
    v = version.Int(0);
  }
  if (v > kSchemaVersion)
    return Status::Unsupported(fmt::format(
        "kernel cache {} has schema version {}, newer than this library's {}; use a newer "
        "flashjit or point FLASHJIT_CACHE_DIR elsewhere",
        path, v, kSchemaVersion));
  if (mode == Mode::kReadWrite) {
    // SQLite silently opens a write-protected file read-only.
    if (sqlite3_db_readonly(db, "main") == 1)
      return Status::PermissionDenied(fmt::format("{} is not writable by this process", path));
    out->journal_ = ChooseJournal(path);
    FLASHJIT_RETURN_IF_ERROR(out->InitSchema());
  }
  // Walks the table's b-tree (not the cubins): a truncated file usually fails here.
  Statement check(db, "SELECT count(*) FROM kernels");
  rc = check.Step();
  if (rc != SQLITE_ROW) {
    if (IsCorruptionCode(rc) || check.prepare_rc() != SQLITE_OK)
      return Status::Corruption(fmt::format("{} is not a readable flashjit kernel database: {}",
                                            path, sqlite3_errmsg(db)));
    return SqliteError(db, rc, "counting kernels");
  }
  return out;
}

Result<std::unique_ptr<KernelDb>> KernelDb::Open(const std::string& path, Mode mode) {
  auto db = OpenOnce(path, mode);
  if (db.ok() || mode != Mode::kReadWrite || db.status().code() != StatusCode::kCorruption)
    return db;
  // A damaged file we own: keep it for inspection and start fresh.
  std::string aside = fmt::format("{}.corrupt-{}-{}", path, Now(), getpid());
  std::error_code ec;
  std::filesystem::rename(path, aside, ec);
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    std::filesystem::remove(path + suffix, ec);
  log::Warn("kernel cache {} was unreadable ({}); moved it to {} and started a new one", path,
            db.status().message(), aside);
  auto fresh = OpenOnce(path, mode);
  if (fresh.ok()) (*fresh)->recoveries_ = 1;
  return fresh;
}

KernelDb::~KernelDb() { sqlite3_close(db_); }

int64_t KernelDb::recoveries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recoveries_;
}

Status KernelDb::InitSchema() {
  // Changing the journal mode needs the file to itself; when another process holds it, keep the
  // mode the file already has (every process of one cache uses the same setting anyway).
  const std::string want = journal_ == "delete" ? "delete" : "wal";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    Statement s(db_, "PRAGMA journal_mode=" + want);
    int rc = s.Step();
    if (rc == SQLITE_ROW) {
      journal_ = s.Text(0);
      break;
    }
    if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
      return CorruptionOrIo(db_, rc, "setting the journal mode");
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FLASHJIT_RETURN_IF_ERROR(
      Exec(db_, journal_ == "wal" ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL",
           "setting synchronous"));
  // Create the schema once, under a write lock, so that many processes opening a new file at
  // the same moment do not all write it.
  auto version = [&]() -> int64_t {
    Statement v(db_, "PRAGMA user_version");
    return v.Step() == SQLITE_ROW ? v.Int(0) : -1;
  };
  if (version() == kSchemaVersion) return Status::Ok();
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE", "locking to create the schema"));
  Status s;
  int64_t v = version();
  if (v < kSchemaVersion) {
    s = Exec(db_, kSchemaSql, "creating the schema");
    if (s.ok())
      s = Exec(db_, fmt::format("PRAGMA user_version={}", kSchemaVersion), "setting the version");
  }
  if (!s.ok()) {
    Exec(db_, "ROLLBACK", "rolling back");
    return s;
  }
  return Exec(db_, "COMMIT", "committing the schema");
}

bool KernelDb::RecoverLocked(int rc, const std::string& what) {
  if (!IsCorruptionCode(rc)) return false;
  ++recoveries_;
  const std::string message = db_ ? sqlite3_errmsg(db_) : "closed";
  if (!writable()) {
    if (!disabled_)
      log::Warn("kernel file {} is damaged ({} while {}); no longer reading it", path_, message,
                what);
    disabled_ = true;
    return false;
  }
  sqlite3_close_v2(db_);
  db_ = nullptr;
  // Move the file aside only if it is still the one we opened: another process may already
  // have replaced it with a fresh one.
  struct stat st;
  std::string moved = "(already replaced by another process)";
  if (stat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
    moved = fmt::format("{}.corrupt-{}-{}", path_, Now(), getpid());
    std::error_code ec;
    std::filesystem::rename(path_, moved, ec);
    for (const char* suffix : {"-wal", "-shm", "-journal"})
      std::filesystem::remove(path_ + suffix, ec);
  }
  auto fresh = OpenOnce(path_, mode_);
  if (!fresh.ok()) {
    log::Warn(
        "kernel cache {} is damaged ({} while {}); moved it to {}; a new one could not be "
        "created ({}): caching in memory only",
        path_, message, what, moved, fresh.status().message());
    disabled_ = true;
    return false;
  }
  log::Warn("kernel cache {} is damaged ({} while {}); moved it to {} and started a new one", path_,
            message, what, moved);
  std::swap(db_, (*fresh)->db_);
  dev_ = (*fresh)->dev_;
  ino_ = (*fresh)->ino_;
  journal_ = (*fresh)->journal_;
  return true;
}

Result<std::optional<CacheEntry>> KernelDb::GetLocked(const std::string& key, int* rc_out) {
  CacheEntry e;
  {
    Statement s(db_, fmt::format("SELECT {} FROM kernels WHERE key = ?1", kKernelColumns));
    s.Bind(1, key);
    int rc = s.Step();
    *rc_out = rc;
    if (rc == SQLITE_DONE) return std::optional<CacheEntry>();
    if (rc != SQLITE_ROW) return CorruptionOrIo(db_, rc, "reading a kernel");
    e = ReadKernelRow(s, true);
  }  // the read ends here: deleting below must not upgrade an open read transaction
  std::string problem = RowProblem(e);
  if (problem.empty()) return std::optional<CacheEntry>(std::move(e));
  log::Warn("kernel cache {}: row {} ({}) is corrupt: {}; treating it as a miss{}", path_, e.name,
            key, problem, writable() ? " and deleting it" : "");
  if (writable()) {
    Statement del(db_, "DELETE FROM kernels WHERE key = ?1");
    del.Bind(1, key).Step();
  }
  return std::optional<CacheEntry>();
}

Result<std::optional<CacheEntry>> KernelDb::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0;; ++attempt) {
    if (disabled_ || !db_) return std::optional<CacheEntry>();
    int rc = SQLITE_OK;
    auto r = GetLocked(key, &rc);
    if (r.ok() || attempt > 0 || !RecoverLocked(rc, "reading a kernel")) return r;
  }
}

Status KernelDb::PutLocked(const CacheEntry& e, int* rc_out) {
  Statement s(db_, fmt::format("INSERT OR IGNORE INTO kernels ({}) VALUES "
                               "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,"
                               "?19,?20,?21)",
                               kKernelColumns));
  int64_t now = Now();
  s.Bind(1, e.key).Bind(2, e.name).Bind(3, e.op).Bind(4, e.arch).Bind(5, e.spec);
  s.Bind(6, e.lib_version).Bind(7, e.template_hash).Bind(8, e.nvrtc_version).Bind(9, e.options);
  s.Bind(10, e.cubin).Bind(11, e.cubin_sha256).Bind(12, static_cast<int64_t>(e.cubin.size()));
  s.Bind(13, e.compile_ms).Bind(14, int64_t{e.registers}).Bind(15, int64_t{e.spill_bytes});
  s.Bind(16, int64_t{e.stack_bytes}).Bind(17, int64_t{e.static_smem}).Bind(18, e.log);
  s.Bind(19, e.created_at ? e.created_at : now).Bind(20, now).Bind(21, e.use_count);
  int rc = s.Step();
  *rc_out = rc;
  if (rc != SQLITE_DONE) return CorruptionOrIo(db_, rc, "publishing a kernel");
  return Status::Ok();
}

Status KernelDb::Put(const CacheEntry& e) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0;; ++attempt) {
    if (disabled_ || !db_)
      return Status::IOError(fmt::format("kernel cache {} is damaged and disabled", path_));
    int rc = SQLITE_OK;
    Status s = PutLocked(e, &rc);
    if (s.ok() || attempt > 0 || !RecoverLocked(rc, "publishing a kernel")) return s;
  }
}

void KernelDb::Touch(const std::string& key) {
  if (!writable()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (disabled_ || !db_) return;
  Statement s(db_, "UPDATE kernels SET use_count = use_count + 1, last_used = ?2 WHERE key = ?1");
  s.Bind(1, key).Bind(2, Now()).Step();
}

Status KernelDb::Delete(const std::string& key) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  if (disabled_ || !db_) return Status::IOError(fmt::format("{} is disabled", path_));
  Statement s(db_, "DELETE FROM kernels WHERE key = ?1");
  int rc = s.Bind(1, key).Step();
  if (rc != SQLITE_DONE) return CorruptionOrIo(db_, rc, "deleting a kernel");
  return Status::Ok();
}

Status KernelDb::Clear() {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  if (disabled_ || !db_) return Status::IOError(fmt::format("{} is disabled", path_));
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "DELETE FROM kernels", "clearing the cache"));
  ReclaimSpaceLocked();
  return Status::Ok();
}

}  // namespace flashjit::cache
