// Engine: lookup order, compile counting, compile-once under threads, JIT off, fallbacks.
#include <flashjit/engine.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "src/engine/engine_impl.h"
#include "src/runtime/driver.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

using test::MakeTestEngine;
using test::TempDir;

VariantSpec Spec(const std::string& json) {
  auto s = VariantSpec::FromJson(json);
  REQUIRE(s.ok());
  return *s;
}

const char* kSpec = R"({"op":"rmsnorm","dtype":"bf16","threads":32,"items":1})";

TEST_CASE("engine: 100 requests of one variant compile it once", "[engine]") {
  TempDir dir;
  auto e = MakeTestEngine(dir.path());
  VariantSpec s = Spec(kSpec);
  for (int i = 0; i < 100; ++i) {
    auto k = e->impl().GetKernel(s, 0);
    REQUIRE(k.ok());
  }
  EngineStats st = e->stats();
  CHECK(st.compiles == 1);
  CHECK(st.memory_hits == 99);
  CHECK(st.module_loads == 1);
}

TEST_CASE("engine: a second engine on the same cache compiles nothing", "[engine]") {
  TempDir dir;
  VariantSpec s = Spec(kSpec);
  {
    auto e = MakeTestEngine(dir.path());
    auto info = e->Build(s);
    REQUIRE(info.ok());
    CHECK(info->source == "compiled");
    CHECK(info->registers > 0);
  }
  auto e = MakeTestEngine(dir.path());
  auto info = e->Build(s);
  REQUIRE(info.ok());
  CHECK(info->source == "cache");
  CHECK(e->stats().compiles == 0);
  CHECK(e->stats().cache_hits == 1);
}

TEST_CASE("engine: 16 threads asking for one new variant cause one compile", "[engine]") {
  TempDir dir;
  auto e = MakeTestEngine(dir.path());
  VariantSpec s = Spec(R"({"op":"rmsnorm","dtype":"f16","threads":64,"items":2})");
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 16; ++t) threads.emplace_back([&] { ok += e->impl().GetKernel(s, 0).ok(); });
  for (auto& t : threads) t.join();
  CHECK(ok == 16);
  CHECK(e->stats().compiles == 1);
}

TEST_CASE("engine: with JIT disabled a miss is a clear error, a hit works", "[engine]") {
  TempDir dir;
  VariantSpec s = Spec(kSpec);
  EngineOptions o;
  o.read_environment = false;
  o.arch = "sm_90a";
  o.cache_dir = dir.path();
  o.disable_jit = true;
  auto e = Engine::Create(o);
  REQUIRE(e.ok());
  auto miss = (*e)->Build(s);
  REQUIRE_FALSE(miss.ok());
  CHECK(miss.status().code() == StatusCode::kNotFound);
  CHECK_THAT(miss.status().message(), Catch::Contains("flashjit cache build"));
  REQUIRE(MakeTestEngine(dir.path())->Build(s).ok());  // prewarm
  auto e2 = Engine::Create(o);
  auto hit = (*e2)->Build(s);
  REQUIRE(hit.ok());
  CHECK(hit->source == "cache");
}

TEST_CASE("engine: a corrupt cached cubin is a miss and is rebuilt", "[engine]") {
  TempDir dir;
  VariantSpec s = Spec(kSpec);
  REQUIRE(MakeTestEngine(dir.path())->Build(s).ok());
  sqlite3* db;
  REQUIRE(sqlite3_open((dir / "kernels.db").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "UPDATE kernels SET cubin = zeroblob(length(cubin))", 0, 0, 0) ==
          SQLITE_OK);
  sqlite3_close(db);
  auto e = MakeTestEngine(dir.path());
  auto info = e->Build(s);
  REQUIRE(info.ok());
  CHECK(info->source == "compiled");
  auto verify = e->VerifyCache(false);
  REQUIRE(verify.ok());
  CHECK(verify->bad_rows == 0);
  CHECK(verify->rows == 1);
}

TEST_CASE("engine: an unwritable cache directory falls back with a warning", "[engine]") {
  if (geteuid() == 0) {
    // root ignores permission bits; use a path under a regular file instead.
    TempDir dir;
    std::ofstream(dir / "file") << "x";
    auto e = MakeTestEngine(dir / "file/sub");
    CHECK_FALSE(e->config().cache_writable);
    CHECK_THAT(e->config().cache_warning, Catch::Contains("in-memory"));
    CHECK(e->Build(Spec(kSpec)).ok());
    return;
  }
  TempDir dir;
  std::filesystem::permissions(
      dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  auto e = MakeTestEngine(dir / "cache");
  CHECK_FALSE(e->config().cache_writable);
  CHECK(e->Build(Spec(kSpec)).ok());
}

TEST_CASE("engine: bad options are refused with the allowed values", "[engine]") {
  EngineOptions o;
  o.read_environment = false;
  o.arch = "sm_42";
  auto e = Engine::Create(o);
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(e.status().message(), Catch::Contains("'arch'") && Catch::Contains("sm_90a"));
  EngineOptions dry;
  dry.read_environment = false;
  dry.dry_run = true;
  auto d = Engine::Create(dry);
  REQUIRE_FALSE(d.ok());
  CHECK_THAT(d.status().message(), Catch::Contains("dry_run"));
}

TEST_CASE("engine: GPU calls without a driver say so", "[engine]") {
  if (runtime::Driver().ok()) return;  // a machine with a driver: nothing to check here
  EngineOptions o;
  o.read_environment = false;
  o.disable_cache = true;
  o.arch = "sm_90a";
  auto e = Engine::Create(o);
  REQUIRE(e.ok());
  Status s = (*e)->Load(Spec(kSpec), 0);
  CHECK(s.code() == StatusCode::kNoDriver);
  CHECK_THAT(s.message(), Catch::Contains("libcuda.so.1"));
}

TEST_CASE("engine: bundles round-trip and are consulted after the cache", "[engine][bundle]") {
  TempDir dir;
  VariantSpec s = Spec(kSpec);
  auto src = MakeTestEngine(dir / "src");
  REQUIRE(src->Build(s).ok());
  auto exported = src->ExportBundle("sm_90a", dir / "b.fjb");
  REQUIRE(exported.ok());
  CHECK(exported->count == 1);
  auto inspected = InspectBundle(dir / "b.fjb");
  REQUIRE(inspected.ok());
  CHECK(inspected->check.ok());
  CHECK(inspected->arch == "sm_90a");
  REQUIRE(inspected->kernels.size() == 1);
  CHECK(inspected->kernels[0].name == s.name());

  // As a read-only layer: a fresh engine with an empty cache hits the bundle.
  EngineOptions o;
  o.read_environment = false;
  o.arch = "sm_90a";
  o.cache_dir = dir / "empty";
  o.bundles = {dir / "b.fjb"};
  auto layered = Engine::Create(o);
  REQUIRE(layered.ok());
  auto info = (*layered)->Build(s);
  REQUIRE(info.ok());
  CHECK_THAT(info->source, Catch::StartsWith("bundle:"));
  CHECK((*layered)->stats().compiles == 0);

  // Import copies into the writable cache.
  auto dst = MakeTestEngine(dir / "dst");
  auto n = dst->ImportBundle(dir / "b.fjb");
  REQUIRE(n.ok());
  CHECK(*n == 1);
  CHECK(dst->Build(s)->source == "cache");

  // Wrong arch and wrong library version are refused with the reason.
  auto wrong_arch = dst->ImportBundle(dir / "b.fjb", "sm_90");
  REQUIRE_FALSE(wrong_arch.ok());
  CHECK_THAT(wrong_arch.status().message(), Catch::Contains("arch") && Catch::Contains("sm_90a"));
  sqlite3* db;
  REQUIRE(sqlite3_open((dir / "b.fjb").c_str(), &db) == SQLITE_OK);
  sqlite3_exec(db, "UPDATE meta SET v = '0.1.0.1' WHERE k = 'lib_version'", 0, 0, 0);
  sqlite3_close(db);
  auto wrong_version = InspectBundle(dir / "b.fjb");
  REQUIRE(wrong_version.ok());
  CHECK_FALSE(wrong_version->check.ok());
  CHECK_THAT(wrong_version->check.message(),
             Catch::Contains("library version") && Catch::Contains("0.1.0.1"));
  CHECK_FALSE(dst->ImportBundle(dir / "b.fjb").ok());
}

TEST_CASE("engine: cache ls, gc and clear", "[engine]") {
  TempDir dir;
  auto e = MakeTestEngine(dir.path());
  REQUIRE(e->Build(Spec(kSpec)).ok());
  REQUIRE(e->Build(Spec(R"({"op":"rmsnorm","dtype":"f16","threads":32,"items":1})")).ok());
  auto rows = e->ListCache();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].current);
  // The file and its WAL: what a removal must give back to the file system.
  const std::string path = e->config().cache_path;
  auto file_bytes = [&] {
    std::error_code ec;
    const auto wal = std::filesystem::file_size(path + "-wal", ec);
    return std::filesystem::file_size(path) + (ec ? 0 : wal);
  };
  const auto full = file_bytes();
  const auto half_cubin =
      static_cast<std::uintmax_t>(std::min((*rows)[0].cubin_size, (*rows)[1].cubin_size) / 2);
  auto evicted = e->GarbageCollectCache((*rows)[0].cubin_size);
  REQUIRE(evicted.ok());
  CHECK(*evicted == 1);
  CHECK(e->ListCache()->size() == 1);
  const auto one = file_bytes();
  CHECK(one + half_cubin < full);
  REQUIRE(e->ClearCache().ok());
  CHECK(e->ListCache()->empty());
  CHECK(file_bytes() + half_cubin < one);
}

TEST_CASE("engine: cache prune removes only kernels this library cannot serve", "[engine]") {
  TempDir dir;
  auto e = MakeTestEngine(dir.path());
  const char* specs[] = {kSpec, R"({"op":"rmsnorm","dtype":"f16","threads":32,"items":1})",
                         R"({"op":"rmsnorm","dtype":"bf16","threads":64,"items":1})",
                         R"({"op":"rmsnorm","dtype":"f16","threads":64,"items":1})"};
  for (const char* s : specs) REQUIRE(e->Build(Spec(s)).ok());
  auto before = e->PruneCache();
  REQUIRE(before.ok());
  CHECK(*before == 0);  // everything is this library's
  // Three rows as an upgrade would leave them: another library version, template set, NVRTC.
  sqlite3* db;
  REQUIRE(sqlite3_open(e->config().cache_path.c_str(), &db) == SQLITE_OK);
  auto update = [&](const char* column, const char* value, const char* dtype, int threads) {
    const std::string sql = fmt::format(
        "UPDATE kernels SET {} = '{}' WHERE spec LIKE '%\"dtype\":\"{}\"%\"threads\":{},%'", column,
        value, dtype, threads);
    REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_changes(db) == 1);
  };
  update("lib_version", "0.0.9", "bf16", 32);
  update("template_hash", "0000", "f16", 32);
  update("nvrtc_version", "12.0", "bf16", 64);
  sqlite3_close(db);
  auto rows = e->ListCache();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 4);
  int current = 0;
  for (const CachedKernel& k : *rows) current += k.current;
  CHECK(current == 1);
  std::error_code ec;
  const auto wal_bytes = std::filesystem::file_size(e->config().cache_path + "-wal", ec);
  const auto file_bytes = std::filesystem::file_size(e->config().cache_path) + (ec ? 0 : wal_bytes);
  auto removed = e->PruneCache();
  REQUIRE(removed.ok());
  CHECK(*removed == 3);
  // The three rows' pages went back to the file system (and the WAL was truncated).
  CHECK(std::filesystem::file_size(e->config().cache_path + "-wal", ec) == 0);
  CHECK(std::filesystem::file_size(e->config().cache_path) + 3 * ((*rows)[0].cubin_size / 2) <
        file_bytes);
  rows = e->ListCache();
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].current);
  CHECK(*e->PruneCache() == 0);
}

}  // namespace
}  // namespace flashjit
