// Crash safety: a writer killed with SIGKILL at random moments, during `cache build` and during
// single inserts, never leaves a database that fails to open, verify, or finish the next run.
// FLASHJIT_RELIABILITY_KILLS scales the number of kills (the figures in docs/RELIABILITY.md
// come from a run with a larger value).
#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <thread>

#include "tests/unit/reliability_util.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

using test::TempDir;

int Kills(int fallback) {
  const char* v = std::getenv("FLASHJIT_RELIABILITY_KILLS");
  return v && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

// Opens as the next process would (read-write, so recovery runs) and checks every row.
void CheckHealthy(const std::string& path, int64_t* rows) {
  auto db = cache::KernelDb::Open(path, cache::KernelDb::Mode::kReadWrite);
  REQUIRE(db.ok());
  CHECK((*db)->recoveries() == 0);  // never damaged, only ever rolled back
  auto v = (*db)->Verify(false);
  REQUIRE(v.ok());
  CHECK(v->integrity_ok);
  CHECK(v->bad_rows == 0);
  *rows = v->rows;
}

}  // namespace

TEST_CASE("reliability: kill -9 during cache build; the next run completes",
          "[reliability][crash]") {
  TempDir dir;
  test::WriteManifest(dir / "m.json", 20);
  const std::string cmd = test::CliCommand("cache build --quiet -j 2 --arch sm_90a --manifest " +
                                           dir / "m.json" + " --cache-dir " + dir / "cache");
  std::mt19937 rng(20261129);
  const int kills = Kills(6);
  int64_t rows = 0;
  for (int k = 0; k < kills; ++k) {
    if (rows == 20) {  // a run finished before its kill: start cold again so kills land mid-run
      std::filesystem::remove_all(dir / "cache");
    }
    test::ChildOptions o;
    o.discard_output = true;
    int fd;
    pid_t pid = test::StartShell("exec " + cmd, o, &fd);
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 2500)(rng)));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    if (std::filesystem::exists(dir / "cache/kernels.db")) {
      INFO("after kill " << k);
      CheckHealthy(dir / "cache/kernels.db", &rows);
    }
  }
  auto r = test::RunShell(cmd);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("0 failed"));
  CheckHealthy(dir / "cache/kernels.db", &rows);
  CHECK(rows == 20);
}

TEST_CASE("reliability: kill -9 during single inserts of large rows", "[reliability][crash]") {
  TempDir dir;
  const std::string path = dir / "kernels.db";
  { REQUIRE(cache::KernelDb::Open(path, cache::KernelDb::Mode::kReadWrite).ok()); }
  std::mt19937 rng(7);
  const int kills = Kills(6) * 10;
  int64_t rows = 0, max_rows = 0;
  for (int k = 0; k < kills; ++k) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // The writer: one INSERT per row, rows of 64 KiB to 2 MiB (many pages, WAL checkpoints).
      auto db = cache::KernelDb::Open(path, cache::KernelDb::Mode::kReadWrite);
      if (!db.ok()) _exit(1);
      std::mt19937 r(k);
      for (int i = 0;; ++i) {
        size_t size = std::uniform_int_distribution<size_t>(64 << 10, 2 << 20)(r);
        auto spec = test::Variant((i + k) % 20);
        auto e = test::FakeEntry(spec, size, static_cast<uint8_t>(i));
        // Distinct keys that still hash right: vary the spec's cache key by arch.
        if (!(*db)->Put(e).ok()) _exit(2);
        (*db)->Delete(e.key);  // keep the file churning: deletes free pages for the next insert
        if (!(*db)->Put(e).ok()) _exit(3);
      }
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(2000, 60000)(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));  // killed, not failed on its own
    INFO("after kill " << k);
    CheckHealthy(path, &rows);
    max_rows = std::max(max_rows, rows);
  }
  CHECK(max_rows > 0);  // the writer did get rows in between kills
}

}  // namespace flashjit
