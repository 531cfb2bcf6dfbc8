#include "src/cache/sqlite_util.h"

#include <fmt/format.h>

namespace flashjit::cache {

Statement::Statement(sqlite3* db, std::string_view sql) {
  prepare_rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (prepare_rc_ != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int i, std::string_view text) {
  sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::Bind(int i, const std::vector<uint8_t>& blob) {
  sqlite3_bind_blob(stmt_, i, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Statement& Statement::Bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}

int Statement::Step() { return stmt_ ? sqlite3_step(stmt_) : prepare_rc_; }

std::string Statement::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), n) : std::string();
}
std::vector<uint8_t> Statement::Blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  if (!p || n <= 0) return {};
  const uint8_t* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}
int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::Real(int col) const { return sqlite3_column_double(stmt_, col); }

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  const char* path = db ? sqlite3_db_filename(db, "main") : nullptr;
  return Status::IOError(fmt::format("SQLite error while {} in {}: {} (code {})", what,
                                     path ? path : "?",
                                     db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), rc));
}

Status Exec(sqlite3* db, std::string_view sql, std::string_view what) {
  std::string s(sql);
  int rc = sqlite3_exec(db, s.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, what);
  return Status::Ok();
}

}  // namespace flashjit::cache
