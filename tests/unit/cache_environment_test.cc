// Environment faults: an unwritable cache directory or file, a full disk, and the rollback
// journal for file systems where WAL is unsafe.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <regex>

#include "tests/unit/reliability_util.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

using test::TempDir;

// A cache in `dir` holding variant 0, compiled for real, then closed.
void Prewarm(const TempDir& dir) {
  auto spec_file = dir / "v0.json";
  std::ofstream(spec_file) << test::VariantJson(0);
  auto r = test::RunShell(test::CliCommand("compile --arch sm_90a --cache-dir " + dir / "cache" +
                                           " --spec " + spec_file));
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (int i = 1; i < 3; ++i)
    std::ofstream(dir / ("v" + std::to_string(i) + ".json")) << test::VariantJson(i);
}

// Runs `flashjit compile` for variants 0 (cached) and 1 (new) in one process (cache build),
// as an unprivileged user: as root, permission bits would not apply.
test::ShellResult BuildTwoAsUser(const TempDir& dir) {
  nlohmann::json j = {
      {"variants",
       {nlohmann::json::parse(test::VariantJson(0)), nlohmann::json::parse(test::VariantJson(1))}}};
  std::ofstream(dir / "two.json") << j.dump();
  chmod((dir / "two.json").c_str(), 0644);
  test::ChildOptions o;
  o.as_nobody = true;
  return test::RunShell(test::CliCommand("cache build --quiet -j 1 --arch sm_90a --cache-dir " +
                                         dir / "cache" + " --manifest " + dir / "two.json"),
                        o);
}

}  // namespace

TEST_CASE("cache environment: an unwritable cache directory is used read-only, one warning",
          "[cache][environment]") {
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  Prewarm(dir);
  chmod((dir / "cache").c_str(), 0555);
  auto r = BuildTwoAsUser(dir);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(test::CountLines(r.out, "flashjit warning:") == 1);
  CHECK_THAT(r.out, Catch::Contains("not writable"));
  CHECK_THAT(r.out, Catch::Contains("1 compiled, 1 already cached, 0 failed"));
  chmod((dir / "cache").c_str(), 0755);
}

TEST_CASE("cache environment: a read-only cache file is used read-only, one warning",
          "[cache][environment]") {
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  Prewarm(dir);
  chmod((dir / "cache/kernels.db").c_str(), 0444);
  chmod((dir / "cache").c_str(), 0777);  // the directory is writable, the file is not
  auto r = BuildTwoAsUser(dir);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(test::CountLines(r.out, "flashjit warning:") == 1);
  CHECK_THAT(r.out, Catch::Contains("1 compiled, 1 already cached, 0 failed"));
}

TEST_CASE("cache environment: no cache directory possible: in memory, one warning",
          "[cache][environment]") {
  TempDir dir;
  chmod(dir.path().c_str(), 0555);
  auto r = BuildTwoAsUser(dir);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(test::CountLines(r.out, "flashjit warning:") == 1);
  CHECK_THAT(r.out, Catch::Contains("in-memory only"));
  CHECK_THAT(r.out, Catch::Contains("2 compiled"));
  chmod(dir.path().c_str(), 0755);
}

TEST_CASE("cache environment: disk full during inserts: kernels still built, database valid",
          "[cache][environment]") {
  TempDir dir;
  test::WriteManifest(dir / "m.json", 20);
  const std::string cmd = test::CliCommand("cache build --quiet -j 1 --arch sm_90a --manifest " +
                                           dir / "m.json" + " --cache-dir " + dir / "cache");
  // Create the (empty) cache first, then let no file grow past 96 KiB: the WAL fills up after
  // a few kernels and every further insert fails with SQLITE_FULL.
  std::filesystem::create_directories(dir / "cache");
  REQUIRE(cache::KernelDb::Open(dir / "cache/kernels.db", cache::KernelDb::Mode::kReadWrite).ok());
  test::ChildOptions limited;
  limited.max_file_bytes = 96 << 10;
  auto r = test::RunShell(cmd, limited);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("20 compiled") && Catch::Contains("0 failed"));
  CHECK(test::CountLines(r.out, "flashjit warning:") == 1);
  CHECK_THAT(r.out, Catch::Contains("could not store"));
  int64_t stored = 0;
  {
    auto db = cache::KernelDb::Open(dir / "cache/kernels.db", cache::KernelDb::Mode::kReadWrite);
    REQUIRE(db.ok());
    auto v = (*db)->Verify(false);
    REQUIRE(v.ok());
    CHECK(v->integrity_ok);
    CHECK(v->bad_rows == 0);
    stored = v->rows;
  }
  CHECK(stored < 20);
  // With room again, the next run stores the rest.
  r = test::RunShell(cmd);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains(std::to_string(20 - stored) + " compiled"));
}

TEST_CASE("cache environment: FLASHJIT_CACHE_JOURNAL=delete for file systems without WAL",
          "[cache][environment]") {
  TempDir dir;
  setenv("FLASHJIT_CACHE_JOURNAL", "delete", 1);
  {
    auto e = test::MakeTestEngine(dir.path());
    unsetenv("FLASHJIT_CACHE_JOURNAL");
    CHECK(e->config().cache_journal == "delete");
    REQUIRE(e->Build(test::Variant(0)).ok());
    CHECK_FALSE(std::filesystem::exists(dir / "kernels.db-wal"));
  }
  // Four processes at once in rollback-journal mode: still one compile per variant, no errors.
  test::WriteManifest(dir / "m.json", 6);
  const std::string cmd = test::CliCommand("cache build --quiet -j 2 --arch sm_90a --manifest " +
                                               dir / "m.json" + " --cache-dir " + dir.path(),
                                           "FLASHJIT_CACHE_JOURNAL=delete");
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int p = 0; p < 4; ++p) {
    int fd;
    pids.push_back(test::StartShell(cmd, {}, &fd));
    fds.push_back(fd);
  }
  int compiled = 0;
  const std::regex summary(R"((\d+) compiled, (\d+) already cached, 0 failed)");
  for (int p = 0; p < 4; ++p) {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fds[p], buf, sizeof buf)) > 0;) out.append(buf, n);
    close(fds[p]);
    int status;
    waitpid(pids[p], &status, 0);
    INFO(out);
    CHECK(WEXITSTATUS(status) == 0);
    std::smatch m;
    REQUIRE(std::regex_search(out, m, summary));
    compiled += std::stoi(m[1]);
  }
  CHECK(compiled == 5);  // variant 0 was already there
}

}  // namespace flashjit
