// Corruption of the kernel cache: each kind is detected, reported once, recovered, and never
// yields a wrong kernel or a crash.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include "tests/unit/reliability_util.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

using cache::KernelDb;
using test::TempDir;

// A cache with `n` fake rows of `size` bytes; returns the entries written.
std::vector<cache::CacheEntry> Fill(const std::string& path, int n, size_t size) {
  auto db = KernelDb::Open(path, KernelDb::Mode::kReadWrite);
  REQUIRE(db.ok());
  std::vector<cache::CacheEntry> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(test::FakeEntry(test::Variant(i), size + i, static_cast<uint8_t>(i)));
    REQUIRE((*db)->Put(out.back()).ok());
  }
  return out;  // closing the last connection checkpoints the WAL into the file
}

void Sql(const std::string& path, const std::string& sql) {
  sqlite3* db;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO(sql << ": " << (err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// Flips one bit of byte `at` of every stored cubin, leaving the stored SHA-256 as it was.
void FlipCubinByte(const std::string& path, int at) {
  sqlite3* db;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> rows;
  sqlite3_stmt* s;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT key, cubin FROM kernels", -1, &s, nullptr) == SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) {
    auto* b = static_cast<const uint8_t*>(sqlite3_column_blob(s, 1));
    rows.push_back({reinterpret_cast<const char*>(sqlite3_column_text(s, 0)),
                    std::vector<uint8_t>(b, b + sqlite3_column_bytes(s, 1))});
  }
  sqlite3_finalize(s);
  for (auto& [key, cubin] : rows) {
    REQUIRE(static_cast<int>(cubin.size()) > at);
    cubin[at] ^= 0x10;
    REQUIRE(sqlite3_prepare_v2(db, "UPDATE kernels SET cubin = ?1 WHERE key = ?2", -1, &s,
                               nullptr) == SQLITE_OK);
    sqlite3_bind_blob(s, 1, cubin.data(), static_cast<int>(cubin.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, key.c_str(), -1, SQLITE_TRANSIENT);
    REQUIRE(sqlite3_step(s) == SQLITE_DONE);
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
}

int MovedAside(const TempDir& dir) {
  int n = 0;
  for (auto& f : std::filesystem::directory_iterator(dir.path()))
    if (f.path().filename().string().find("kernels.db.corrupt-") == 0) ++n;
  return n;
}

// Every Get returns the original row or a miss, never something else.
void CheckNoWrongKernel(KernelDb& db, const std::vector<cache::CacheEntry>& rows, int* hits) {
  *hits = 0;
  for (const auto& want : rows) {
    auto got = db.Get(want.key);
    if (!got.ok() || !got->has_value()) continue;
    ++*hits;
    CHECK((*got)->cubin == want.cubin);
    CHECK((*got)->spec == want.spec);
  }
}

}  // namespace

TEST_CASE("cache corruption: a truncated file is moved aside and a fresh cache works",
          "[cache][corruption]") {
  TempDir dir;
  const std::string path = dir / "kernels.db";
  auto rows = Fill(path, 20, 50000);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) * 2 / 5);
  // Through the CLI: the damage is reported once and the command still succeeds.
  auto r = test::RunShell(test::CliCommand("cache ls --cache-dir " + dir.path()));
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(test::CountLines(r.out, "flashjit warning:") == 1);
  CHECK_THAT(r.out, Catch::Contains("moved it to"));
  CHECK_THAT(r.out, Catch::Contains("0 kernels"));
  CHECK(MovedAside(dir) == 1);
  auto db = KernelDb::Open(path, KernelDb::Mode::kReadWrite);
  REQUIRE(db.ok());
  REQUIRE((*db)->Put(rows[0]).ok());
  auto got = (*db)->Get(rows[0].key);
  REQUIRE(got.ok());
  CHECK(got->has_value());
}

TEST_CASE("cache corruption: a file of garbage is moved aside", "[cache][corruption]") {
  TempDir dir;
  {
    std::ofstream f(dir / "kernels.db", std::ios::binary);
    std::mt19937 rng(1);
    for (int i = 0; i < 100000; ++i) f.put(static_cast<char>(rng()));
  }
  auto e = test::MakeTestEngine(dir.path());
  CHECK(e->config().cache_writable);
  CHECK(MovedAside(dir) == 1);
  auto got = e->VerifyCache(false);
  REQUIRE(got.ok());
  CHECK(got->rows == 0);
}

TEST_CASE("cache corruption: damage found after open is recovered on the spot",
          "[cache][corruption]") {
  // Garbage written over pages in the middle of a healthy file, while it is open: reads either
  // fail a row check (a miss) or find the file damaged (moved aside, fresh file); the caller
  // sees a hit with the right bytes or a miss, never a wrong cubin or a crash.
  std::mt19937 rng(42);
  int recovered = 0, bad_rows_seen = 0;
  for (int trial = 0; trial < 24; ++trial) {
    TempDir dir;
    const std::string path = dir / "kernels.db";
    auto rows = Fill(path, 12, 20000);
    auto db = KernelDb::Open(path, KernelDb::Mode::kReadWrite);
    REQUIRE(db.ok());
    {
      const auto size = std::filesystem::file_size(path);
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      // Skip page 1 (the header: damage there is the "garbage file" case).
      f.seekp(std::uniform_int_distribution<size_t>(4096, size - 600)(rng));
      for (int i = 0; i < 512; ++i) f.put(static_cast<char>(rng()));
    }
    int hits = 0;
    CheckNoWrongKernel(**db, rows, &hits);
    recovered += (*db)->recoveries() > 0;
    bad_rows_seen += hits < 12 && (*db)->recoveries() == 0;
    // Whatever happened, the cache is usable again.
    REQUIRE((*db)->Put(rows[0]).ok());
    auto again = (*db)->Get(rows[0].key);
    REQUIRE(again.ok());
    CHECK(again->has_value());
  }
  INFO("recovered " << recovered << ", row misses " << bad_rows_seen);
  CHECK(recovered + bad_rows_seen > 0);
}

TEST_CASE("cache corruption: a flipped byte in a cubin is a miss and the row is rebuilt",
          "[cache][corruption]") {
  TempDir dir;
  VariantSpec spec = test::Variant(3);
  auto first = test::MakeTestEngine(dir.path());
  auto built = first->Build(spec);
  REQUIRE(built.ok());
  first.reset();
  // Flip one byte in the middle of the stored cubin.
  FlipCubinByte(dir / "kernels.db", 100);
  auto r = test::RunShell(test::CliCommand("cache verify --cache-dir " + dir.path()));
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("1 corrupt") && Catch::Contains("SHA-256"));
  auto e = test::MakeTestEngine(dir.path());
  auto info = e->Build(spec);
  REQUIRE(info.ok());
  CHECK(info->source == "compiled");
  CHECK(info->cubin_size == built->cubin_size);
  auto v = e->VerifyCache(false);
  REQUIRE(v.ok());
  CHECK(v->rows == 1);
  CHECK(v->bad_rows == 0);
  CHECK(test::MakeTestEngine(dir.path())->Build(spec)->source == "cache");
}

TEST_CASE("cache corruption: rows whose metadata disagrees with the blob are never served",
          "[cache][corruption]") {
  TempDir dir;
  const std::string path = dir / "kernels.db";
  auto rows = Fill(path, 5, 3000);
  // 0: size column wrong. 1: sha column of another row. 2: spec of another variant (the key no
  // longer hashes it). 3: arch changed. 4: spec bytes that are not UTF-8 (found by fuzz_bundle:
  // hashing them used to throw).
  Sql(path, "UPDATE kernels SET cubin_size = cubin_size + 1 WHERE key = '" + rows[0].key + "'");
  Sql(path, "UPDATE kernels SET cubin_sha256 = '" + rows[2].cubin_sha256 + "' WHERE key = '" +
                rows[1].key + "'");
  Sql(path, "UPDATE kernels SET spec = (SELECT spec FROM kernels WHERE key = '" + rows[3].key +
                "') WHERE key = '" + rows[2].key + "'");
  Sql(path, "UPDATE kernels SET arch = 'sm_90' WHERE key = '" + rows[3].key + "'");
  Sql(path,
      "UPDATE kernels SET spec = CAST(X'7B22FF227D' AS TEXT) WHERE key = '" + rows[4].key + "'");
  auto db = KernelDb::Open(path, KernelDb::Mode::kReadWrite);
  REQUIRE(db.ok());
  auto v = (*db)->Verify(false);
  REQUIRE(v.ok());
  CHECK(v->bad_rows == 5);
  for (const auto& e : rows) {
    auto got = (*db)->Get(e.key);
    REQUIRE(got.ok());
    CHECK_FALSE(got->has_value());
  }
  v = (*db)->Verify(false);
  REQUIRE(v.ok());
  CHECK(v->rows == 0);  // each bad row was deleted on first sight: reported once
}

TEST_CASE("cache corruption: a future schema is refused, left untouched, and the engine works",
          "[cache][corruption]") {
  TempDir dir;
  const std::string path = dir / "kernels.db";
  Fill(path, 1, 1000);
  Sql(path, "PRAGMA user_version = 99");
  const auto before = std::filesystem::file_size(path);
  auto db = KernelDb::Open(path, KernelDb::Mode::kReadWrite);
  REQUIRE_FALSE(db.ok());
  CHECK(db.status().code() == StatusCode::kUnsupported);
  CHECK_THAT(db.status().message(), Catch::Contains("schema version 99"));
  auto r = test::RunShell(test::CliCommand("compile --arch sm_90a --cache-dir " + dir.path() +
                                           " --spec /dev/stdin <<'EOF'\n" + test::VariantJson(5) +
                                           "\nEOF"));
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(test::CountLines(r.out, "flashjit warning:") == 1);
  CHECK_THAT(r.out, Catch::Contains("newer than this library"));
  CHECK(std::filesystem::file_size(path) == before);
  CHECK(MovedAside(dir) == 0);
}

}  // namespace flashjit
