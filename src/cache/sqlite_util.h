// Small RAII helpers over the SQLite C API.
#pragma once

#include <flashjit/status.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flashjit::cache {

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool prepared() const { return stmt_ != nullptr; }
  int prepare_rc() const { return prepare_rc_; }

  Statement& Bind(int i, std::string_view text);
  Statement& Bind(int i, const std::vector<uint8_t>& blob);
  Statement& Bind(int i, int64_t v);
  Statement& Bind(int i, double v);

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step();

  std::string Text(int col) const;
  std::vector<uint8_t> Blob(int col) const;
  int64_t Int(int col) const;
  double Real(int col) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int prepare_rc_ = SQLITE_OK;
};

// Runs one or more statements with no result rows.
Status Exec(sqlite3* db, std::string_view sql, std::string_view what);

// "database is locked (code 5) while <what> in <path>"
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace flashjit::cache
