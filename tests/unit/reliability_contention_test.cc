// Cold start under contention: many processes and threads ask for the same variants of an empty
// cache at once. Each variant must be compiled exactly once across all of them; a waiter whose
// compiling peer dies takes over; a stale lock file blocks nobody.
#include <sys/file.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <regex>
#include <thread>

#include "src/cache/compile_lock.h"
#include "tests/unit/reliability_util.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

using test::TempDir;
constexpr int kVariants = 20;

std::shared_ptr<Engine> CacheEngine(const std::string& dir, int wait_ms = 600000) {
  EngineOptions o;
  o.read_environment = false;
  o.arch = "sm_90a";
  o.dry_run = true;
  o.cache_dir = dir;
  o.compile_wait_ms = wait_ms;
  auto e = Engine::Create(o);
  REQUIRE(e.ok());
  return *e;
}

void CheckCacheComplete(const std::string& dir, int rows) {
  auto db = cache::KernelDb::Open(dir + "/kernels.db", cache::KernelDb::Mode::kReadOnly);
  REQUIRE(db.ok());
  auto v = (*db)->Verify(false);
  REQUIRE(v.ok());
  CHECK(v->integrity_ok);
  CHECK(v->rows == rows);
  CHECK(v->bad_rows == 0);
}

}  // namespace

TEST_CASE("reliability: 16 processes, 20 variants, empty cache: one compile per variant",
          "[reliability][contention]") {
  TempDir dir;
  test::WriteManifest(dir / "m.json", kVariants);
  // Each process walks the manifest with 2 threads; all 16 start at once.
  const std::string cmd = test::CliCommand("cache build --quiet -j 2 --arch sm_90a --manifest " +
                                           dir / "m.json" + " --cache-dir " + dir / "cache");
  constexpr int kProcesses = 16;
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int p = 0; p < kProcesses; ++p) {
    int fd = -1;
    pids.push_back(test::StartShell(cmd, {}, &fd));
    fds.push_back(fd);
  }
  int compiled = 0, cached = 0;
  const std::regex summary(R"((\d+) variants, (\d+) compiled, (\d+) already cached, (\d+) failed)");
  for (int p = 0; p < kProcesses; ++p) {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fds[p], buf, sizeof buf)) > 0;) out.append(buf, n);
    close(fds[p]);
    int status = 0;
    waitpid(pids[p], &status, 0);
    INFO("process " << p << " output:\n" << out);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(out.find("locked") == std::string::npos);
    CHECK(out.find("warning") == std::string::npos);
    std::smatch m;
    REQUIRE(std::regex_search(out, m, summary));
    CHECK(std::stoi(m[1]) == kVariants);
    CHECK(std::stoi(m[4]) == 0);
    compiled += std::stoi(m[2]);
    cached += std::stoi(m[3]);
  }
  CHECK(compiled == kVariants);
  CHECK(cached == kProcesses * kVariants - kVariants);
  CheckCacheComplete(dir / "cache", kVariants);
}

TEST_CASE("reliability: 16 threads with their own engines, 20 variants: one compile each",
          "[reliability][contention]") {
  TempDir dir;
  constexpr int kThreads = 16;
  std::vector<std::shared_ptr<Engine>> engines;
  for (int t = 0; t < kThreads; ++t) engines.push_back(CacheEngine(dir.path()));
  std::atomic<int> errors{0}, ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int> order(kVariants);
      for (int i = 0; i < kVariants; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));
      ++ready;
      while (ready < kThreads) std::this_thread::yield();
      for (int i : order) {
        auto info = engines[t]->Build(test::Variant(i));
        if (!info.ok() || info->cubin_size <= 0) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  int64_t compiles = 0, hits = 0;
  for (auto& e : engines) {
    compiles += e->stats().compiles;
    hits += e->stats().cache_hits;
  }
  CHECK(compiles == kVariants);
  CHECK(hits == kThreads * kVariants - kVariants);
  CheckCacheComplete(dir.path(), kVariants);
}

TEST_CASE("reliability: 16 threads sharing one engine: one compile per variant",
          "[reliability][contention]") {
  TempDir dir;
  auto engine = CacheEngine(dir.path());
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kVariants; ++k)
        if (!engine->Build(test::Variant((k + t) % kVariants)).ok()) ++errors;
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  CHECK(engine->stats().compiles == kVariants);
}

TEST_CASE("reliability: a waiter takes over when the compiling process dies",
          "[reliability][contention]") {
  TempDir dir;
  VariantSpec spec = test::Variant(0);
  auto engine = CacheEngine(dir.path());
  auto key = engine->Key(spec);
  REQUIRE(key.ok());
  const std::string lock_path = cache::CompileLock::PathFor(dir.path(), *key);
  std::filesystem::create_directories(dir / "locks");
  // A "peer" that claimed the key and then hangs: it holds the lock until it is killed.
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t peer = fork();
  REQUIRE(peer >= 0);
  if (peer == 0) {
    int fd = open(lock_path.c_str(), O_RDWR | O_CREAT, 0666);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
    (void)!write(ready[1], "x", 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);

  std::atomic<bool> done{false};
  Result<KernelInfo> info = Status::Internal("not run");
  std::thread waiter([&] {
    info = engine->Build(spec);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK_FALSE(done.load());  // blocked behind the live peer
  CHECK(engine->stats().compiles == 0);
  kill(peer, SIGKILL);
  waitpid(peer, nullptr, 0);
  waiter.join();
  REQUIRE(info.ok());
  CHECK(info->source == "compiled");
  CHECK(engine->stats().compiles == 1);
  CHECK(engine->stats().compile_waits == 1);
  CheckCacheComplete(dir.path(), 1);
}

TEST_CASE("reliability: stale lock files block nobody; a stuck peer is bounded by the timeout",
          "[reliability][contention]") {
  TempDir dir;
  VariantSpec spec = test::Variant(1);
  auto engine = CacheEngine(dir.path(), /*wait_ms=*/300);
  auto key = engine->Key(spec);
  REQUIRE(key.ok());
  std::filesystem::create_directories(dir / "locks");
  const std::string lock_path = cache::CompileLock::PathFor(dir.path(), *key);
  std::ofstream(lock_path) << "left behind by a crashed process";
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(engine->Build(spec).ok());
  CHECK(engine->stats().compile_waits == 0);

  // A live holder that never finishes: the waiter gives up after compile_wait_ms and compiles.
  VariantSpec other = test::Variant(2);
  auto other_key = engine->Key(other);
  REQUIRE(other_key.ok());
  int fd =
      open(cache::CompileLock::PathFor(dir.path(), *other_key).c_str(), O_RDWR | O_CREAT, 0666);
  REQUIRE(fd >= 0);
  REQUIRE(flock(fd, LOCK_EX) == 0);  // another open file description: conflicts with ours
  t0 = std::chrono::steady_clock::now();
  auto info = engine->Build(other);
  double waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  REQUIRE(info.ok());
  CHECK(info->source == "compiled");
  CHECK(waited_ms >= 300);
  CHECK(engine->stats().compiles == 2);
}

}  // namespace flashjit
