#include "src/cache/kernel_db.h"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include "schema_sql.h"
#include "src/cache/sqlite_util.h"
#include "src/common/log.h"
#include "src/common/sha256.h"

namespace flashjit::cache {
namespace {

constexpr const char* kColumns =
    "key, name, op, arch, spec, lib_version, template_hash, nvrtc_version, options, cubin, "
    "cubin_sha256, cubin_size, compile_ms, registers, spill_bytes, stack_bytes, static_smem, log, "
    "created_at, last_used, use_count";

CacheEntry ReadRow(const Statement& s, bool with_blob) {
  CacheEntry e;
  e.key = s.Text(0);
  e.name = s.Text(1);
  e.op = s.Text(2);
  e.arch = s.Text(3);
  e.spec = s.Text(4);
  e.lib_version = s.Text(5);
  e.template_hash = s.Text(6);
  e.nvrtc_version = s.Text(7);
  e.options = s.Text(8);
  if (with_blob) e.cubin = s.Blob(9);
  e.cubin_sha256 = s.Text(10);
  e.cubin_size = s.Int(11);
  e.compile_ms = s.Real(12);
  e.registers = static_cast<int>(s.Int(13));
  e.spill_bytes = static_cast<int>(s.Int(14));
  e.stack_bytes = static_cast<int>(s.Int(15));
  e.static_smem = static_cast<int>(s.Int(16));
  if (with_blob) e.log = s.Text(17);
  e.created_at = s.Int(18);
  e.last_used = s.Int(19);
  e.use_count = s.Int(20);
  return e;
}

// Why a row with its blob is not trustworthy; empty when it is.
std::string RowProblem(const CacheEntry& e) {
  const int64_t stored_size = e.cubin_size;
  if (e.cubin.empty()) return "empty cubin";
  if (static_cast<int64_t>(e.cubin.size()) != stored_size)
    return fmt::format("cubin is {} bytes, metadata says {}", e.cubin.size(), stored_size);
  std::string actual = Sha256Hex(e.cubin.data(), e.cubin.size());
  if (actual != e.cubin_sha256)
    return fmt::format("cubin SHA-256 {} does not match the stored {}", actual, e.cubin_sha256);
  return "";
}

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

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
    Status s = SqliteError(db, rc, "opening the kernel cache");
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, 30000);
  auto out = std::unique_ptr<KernelDb>(new KernelDb(db, path, mode));
  // Any read forces SQLite to look at the header: garbage files fail here. The statement is
  // finished before the schema is touched (an open read would block the switch to WAL).
  int64_t v = 0;
  {
    Statement version(db, "PRAGMA user_version");
    rc = version.Step();
    if (rc != SQLITE_ROW)
      return Status::Corruption(SqliteError(db, rc, "reading the schema version").message());
    v = version.Int(0);
  }
  if (v > kSchemaVersion)
    return Status::Unsupported(fmt::format(
        "kernel cache {} has schema version {}, newer than this library's {}; use a newer "
        "flashjit or point FLASHJIT_CACHE_DIR elsewhere",
        path, v, kSchemaVersion));
  if (mode == Mode::kReadWrite) {
    FLASHJIT_RETURN_IF_ERROR(out->InitSchema());
  } else {
    Statement check(db, "SELECT count(*) FROM kernels");
    if (check.Step() != SQLITE_ROW)
      return Status::Corruption(fmt::format("{} is not a flashjit kernel database", path));
  }
  return out;
}

Result<std::unique_ptr<KernelDb>> KernelDb::Open(const std::string& path, Mode mode) {
  auto db = OpenOnce(path, mode);
  if (db.ok() || mode != Mode::kReadWrite || db.status().code() != StatusCode::kCorruption)
    return db;
  // A damaged file we own: keep it for inspection and start fresh.
  std::string aside = fmt::format("{}.corrupt-{}", path, Now());
  std::error_code ec;
  std::filesystem::rename(path, aside, ec);
  for (const char* suffix : {"-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
  log::Warn("kernel cache {} was unreadable ({}); moved it to {} and started a new one", path,
            db.status().message(), aside);
  return OpenOnce(path, mode);
}

KernelDb::~KernelDb() { sqlite3_close(db_); }

Status KernelDb::InitSchema() {
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "PRAGMA journal_mode=WAL", "enabling WAL"));
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "PRAGMA synchronous=NORMAL", "setting synchronous"));
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, kSchemaSql, "creating the schema"));
  return Exec(db_, fmt::format("PRAGMA user_version={}", kSchemaVersion), "setting the version");
}

Result<std::optional<CacheEntry>> KernelDb::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement s(db_, fmt::format("SELECT {} FROM kernels WHERE key = ?1", kColumns));
  s.Bind(1, key);
  int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<CacheEntry>();
  if (rc != SQLITE_ROW) return SqliteError(db_, rc, "reading a kernel");
  CacheEntry e = ReadRow(s, true);
  std::string problem = RowProblem(e);
  if (!problem.empty()) {
    log::Warn("kernel cache {}: row {} ({}) is corrupt: {}; treating it as a miss", path_, e.name,
              key, problem);
    if (writable()) {
      Statement del(db_, "DELETE FROM kernels WHERE key = ?1");
      del.Bind(1, key).Step();
    }
    return std::optional<CacheEntry>();
  }
  return std::optional<CacheEntry>(std::move(e));
}

Status KernelDb::Put(const CacheEntry& e) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  Statement s(db_, fmt::format("INSERT OR IGNORE INTO kernels ({}) VALUES "
                               "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,"
                               "?19,?20,?21)",
                               kColumns));
  int64_t now = Now();
  s.Bind(1, e.key).Bind(2, e.name).Bind(3, e.op).Bind(4, e.arch).Bind(5, e.spec);
  s.Bind(6, e.lib_version).Bind(7, e.template_hash).Bind(8, e.nvrtc_version).Bind(9, e.options);
  s.Bind(10, e.cubin).Bind(11, e.cubin_sha256).Bind(12, static_cast<int64_t>(e.cubin.size()));
  s.Bind(13, e.compile_ms).Bind(14, int64_t{e.registers}).Bind(15, int64_t{e.spill_bytes});
  s.Bind(16, int64_t{e.stack_bytes}).Bind(17, int64_t{e.static_smem}).Bind(18, e.log);
  s.Bind(19, e.created_at ? e.created_at : now).Bind(20, now).Bind(21, e.use_count);
  int rc = s.Step();
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, "publishing a kernel");
  return Status::Ok();
}

void KernelDb::Touch(const std::string& key) {
  if (!writable()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Statement s(db_, "UPDATE kernels SET use_count = use_count + 1, last_used = ?2 WHERE key = ?1");
  s.Bind(1, key).Bind(2, Now()).Step();
}

Status KernelDb::Delete(const std::string& key) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  Statement s(db_, "DELETE FROM kernels WHERE key = ?1");
  int rc = s.Bind(1, key).Step();
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, "deleting a kernel");
  return Status::Ok();
}

Status KernelDb::Clear() {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  return Exec(db_, "DELETE FROM kernels", "clearing the cache");
}

Result<std::vector<CacheEntry>> KernelDb::List() {
  std::lock_guard<std::mutex> lock(mu_);
  // The blob and log columns are read as NULL: listing reads no cubins.
  Statement s(db_,
              "SELECT key, name, op, arch, spec, lib_version, template_hash, nvrtc_version, "
              "options, NULL, cubin_sha256, cubin_size, compile_ms, registers, spill_bytes, "
              "stack_bytes, static_smem, NULL, created_at, last_used, use_count "
              "FROM kernels ORDER BY name");
  std::vector<CacheEntry> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadRow(s, false));
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, "listing kernels");
  return out;
}

Result<std::vector<CacheEntry>> KernelDb::ListFull(const std::string& arch_filter) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement s(
      db_, fmt::format("SELECT {} FROM kernels WHERE ?1 = '' OR arch = ?1 ORDER BY key", kColumns));
  s.Bind(1, arch_filter);
  std::vector<CacheEntry> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    CacheEntry e = ReadRow(s, true);
    std::string problem = RowProblem(e);
    if (!problem.empty()) {
      log::Warn("kernel cache {}: skipping corrupt row {} ({}): {}", path_, e.name, e.key, problem);
      continue;
    }
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, "reading kernels");
  return out;
}

Result<VerifyReport> KernelDb::Verify(bool delete_bad) {
  VerifyReport report;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Statement ic(db_, "PRAGMA integrity_check");
    if (ic.Step() == SQLITE_ROW) {
      report.integrity_message = ic.Text(0);
      report.integrity_ok = report.integrity_message == "ok";
    }
    Statement s(db_, fmt::format("SELECT {} FROM kernels", kColumns));
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      ++report.rows;
      CacheEntry e = ReadRow(s, true);
      std::string problem = RowProblem(e);
      if (!problem.empty()) {
        ++report.bad_rows;
        report.bad_keys.push_back(e.key + " " + e.name + ": " + problem);
      }
    }
    if (rc != SQLITE_DONE) return SqliteError(db_, rc, "verifying kernels");
  }
  if (delete_bad && writable()) {
    for (const std::string& bad : report.bad_keys)
      FLASHJIT_RETURN_IF_ERROR(Delete(bad.substr(0, bad.find(' '))));
  }
  return report;
}

Result<int64_t> KernelDb::GarbageCollect(int64_t max_bytes) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  Statement s(db_, "SELECT key, cubin_size FROM kernels ORDER BY last_used DESC, use_count DESC");
  std::vector<std::string> evict;
  int64_t kept = 0;
  while (s.Step() == SQLITE_ROW) {
    int64_t size = s.Int(1);
    if (kept + size <= max_bytes) {
      kept += size;
    } else {
      evict.push_back(s.Text(0));
    }
  }
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE", "starting garbage collection"));
  for (const std::string& key : evict) {
    Statement del(db_, "DELETE FROM kernels WHERE key = ?1");
    int rc = del.Bind(1, key).Step();
    if (rc != SQLITE_DONE) {
      Exec(db_, "ROLLBACK", "rolling back");
      return SqliteError(db_, rc, "garbage collecting");
    }
  }
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "COMMIT", "committing garbage collection"));
  return static_cast<int64_t>(evict.size());
}

Result<std::map<std::string, std::string>> KernelDb::ReadMeta() {
  std::lock_guard<std::mutex> lock(mu_);
  Statement s(db_, "SELECT k, v FROM meta");
  std::map<std::string, std::string> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out[s.Text(0)] = s.Text(1);
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, "reading the manifest");
  return out;
}

Status KernelDb::WriteMeta(const std::map<std::string, std::string>& meta) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, v] : meta) {
    Statement s(db_, "INSERT OR REPLACE INTO meta (k, v) VALUES (?1, ?2)");
    int rc = s.Bind(1, k).Bind(2, v).Step();
    if (rc != SQLITE_DONE) return SqliteError(db_, rc, "writing the manifest");
  }
  return Status::Ok();
}

}  // namespace flashjit::cache
