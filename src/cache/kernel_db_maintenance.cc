// KernelDb's whole-file operations: listing, verification, eviction and the meta table.
#include <fmt/format.h>

#include "src/cache/kernel_db.h"
#include "src/cache/kernel_row.h"
#include "src/common/log.h"

namespace flashjit::cache {
namespace {

Status Disabled(const std::string& path) {
  return Status::Corruption(fmt::format("kernel file {} is damaged and no longer read", path));
}

}  // namespace

Result<std::vector<CacheEntry>> KernelDb::List() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0;; ++attempt) {
    if (disabled_ || !db_) return Disabled(path_);
    std::vector<CacheEntry> out;
    int rc;
    {
      // The blob and log columns are read as NULL: listing reads no cubins.
      Statement s(db_,
                  "SELECT key, name, op, arch, spec, lib_version, template_hash, nvrtc_version, "
                  "options, NULL, cubin_sha256, cubin_size, compile_ms, registers, spill_bytes, "
                  "stack_bytes, static_smem, NULL, created_at, last_used, use_count "
                  "FROM kernels ORDER BY name");
      while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadKernelRow(s, false));
    }  // finalised before any recovery closes the connection
    if (rc == SQLITE_DONE) return out;
    Status err = SqliteError(db_, rc, "listing kernels");
    if (attempt > 0 || !RecoverLocked(rc, "listing kernels")) return err;
  }
}

Result<std::vector<CacheEntry>> KernelDb::ListFull(const std::string& arch_filter) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0;; ++attempt) {
    if (disabled_ || !db_) return Disabled(path_);
    std::vector<CacheEntry> out;
    int rc;
    {
      Statement s(db_, fmt::format("SELECT {} FROM kernels WHERE ?1 = '' OR arch = ?1 ORDER BY key",
                                   kKernelColumns));
      s.Bind(1, arch_filter);
      while ((rc = s.Step()) == SQLITE_ROW) {
        CacheEntry e = ReadKernelRow(s, true);
        std::string problem = RowProblem(e);
        if (!problem.empty()) {
          log::Warn("kernel cache {}: skipping corrupt row {} ({}): {}", path_, e.name, e.key,
                    problem);
          continue;
        }
        out.push_back(std::move(e));
      }
    }
    if (rc == SQLITE_DONE) return out;
    Status err = SqliteError(db_, rc, "reading kernels");
    if (attempt > 0 || !RecoverLocked(rc, "reading kernels")) return err;
  }
}

Result<VerifyReport> KernelDb::Verify(bool delete_bad) {
  VerifyReport report;
  std::vector<std::string> bad;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (disabled_ || !db_) return Disabled(path_);
    Statement ic(db_, "PRAGMA integrity_check");
    int rc = ic.Step();
    if (rc == SQLITE_ROW) {
      report.integrity_message = ic.Text(0);
      report.integrity_ok = report.integrity_message == "ok";
    } else {
      report.integrity_ok = false;
      report.integrity_message = sqlite3_errmsg(db_);
    }
    Statement s(db_, fmt::format("SELECT {} FROM kernels", kKernelColumns));
    while ((rc = s.Step()) == SQLITE_ROW) {
      ++report.rows;
      CacheEntry e = ReadKernelRow(s, true);
      std::string problem = RowProblem(e);
      if (!problem.empty()) {
        ++report.bad_rows;
        bad.push_back(e.key);
        report.bad_keys.push_back(e.key + " " + e.name + ": " + problem);
      }
    }
    if (rc != SQLITE_DONE) {
      if (!IsCorruptionCode(rc)) return SqliteError(db_, rc, "verifying kernels");
      report.integrity_ok = false;
      report.integrity_message = sqlite3_errmsg(db_);
    }
  }
  if (delete_bad && writable()) {
    for (const std::string& key : bad) FLASHJIT_RETURN_IF_ERROR(Delete(key));
  }
  return report;
}

Result<int64_t> KernelDb::GarbageCollect(int64_t max_bytes) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  if (disabled_ || !db_) return Disabled(path_);
  // One write transaction for the whole pass: the ranking and the deletes see one snapshot.
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE", "starting garbage collection"));
  std::vector<std::string> evict;
  {
    Statement s(db_, "SELECT key, cubin_size FROM kernels ORDER BY last_used DESC, use_count DESC");
    int64_t kept = 0;
    while (s.Step() == SQLITE_ROW) {
      int64_t size = s.Int(1);
      if (kept + size <= max_bytes) {
        kept += size;
      } else {
        evict.push_back(s.Text(0));
      }
    }
  }
  for (const std::string& key : evict) {
    Statement del(db_, "DELETE FROM kernels WHERE key = ?1");
    int rc = del.Bind(1, key).Step();
    if (rc != SQLITE_DONE) {
      Status err = SqliteError(db_, rc, "garbage collecting");
      Exec(db_, "ROLLBACK", "rolling back");
      return err;
    }
  }
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "COMMIT", "committing garbage collection"));
  if (!evict.empty()) ReclaimSpaceLocked();
  return static_cast<int64_t>(evict.size());
}

Result<int64_t> KernelDb::DeleteOtherVersions(const std::string& lib_version,
                                              const std::string& template_hash,
                                              const std::string& nvrtc_version) {
  if (!writable()) return Status::PermissionDenied(fmt::format("{} is read-only", path_));
  std::lock_guard<std::mutex> lock(mu_);
  if (disabled_ || !db_) return Disabled(path_);
  Statement del(db_,
                "DELETE FROM kernels WHERE lib_version != ?1 OR template_hash != ?2 OR "
                "nvrtc_version != ?3");
  int rc = del.Bind(1, lib_version).Bind(2, template_hash).Bind(3, nvrtc_version).Step();
  if (rc != SQLITE_DONE) return SqliteError(db_, rc, "pruning kernels of other versions");
  const int64_t removed = sqlite3_changes(db_);
  if (removed > 0) ReclaimSpaceLocked();
  return removed;
}

void KernelDb::ReclaimSpaceLocked() {
  for (const char* sql : {"VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"}) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      log::Warn(
          "kernel cache {}: {} failed ({}); the removed rows are gone, their space stays "
          "in the file until the next clean-up",
          path_, sql, sqlite3_errmsg(db_));
      return;
    }
  }
}

Result<std::map<std::string, std::string>> KernelDb::ReadMeta() {
  std::lock_guard<std::mutex> lock(mu_);
  if (disabled_ || !db_) return Disabled(path_);
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
  if (disabled_ || !db_) return Disabled(path_);
  FLASHJIT_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE", "writing the manifest"));
  for (const auto& [k, v] : meta) {
    Statement s(db_, "INSERT OR REPLACE INTO meta (k, v) VALUES (?1, ?2)");
    int rc = s.Bind(1, k).Bind(2, v).Step();
    if (rc != SQLITE_DONE) {
      Status err = SqliteError(db_, rc, "writing the manifest");
      Exec(db_, "ROLLBACK", "rolling back");
      return err;
    }
  }
  return Exec(db_, "COMMIT", "committing the manifest");
}

}  // namespace flashjit::cache
