// The flashjit CLI, run as a user would: exit codes, output, and what it leaves in the cache.
#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

struct Run {
  int code;
  std::string out;
};

Run Cli(const test::TempDir& dir, const std::string& args) {
  std::string cmd = "env -u FLASHJIT_ARCH -u FLASHJIT_BUNDLES FLASHJIT_CACHE_DIR=" + dir / "cache" +
                    " " FLASHJIT_CLI_PATH " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST_CASE("cli: show-config works with no GPU and reports versions", "[cli]") {
  test::TempDir dir;
  Run r = Cli(dir, "show-config --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  CHECK(j["library_version"] == "0.1.0");
  CHECK(j["nvrtc_version"].get<std::string>().find('.') != std::string::npos);
  CHECK(j["cache_path"].get<std::string>().find(dir.path()) == 0);
  CHECK(j["ops"].size() >= 1);
  CHECK(Cli(dir, "show-config").code == 0);
}

TEST_CASE("cli: render and compile one spec; bad specs exit 2 with the reason", "[cli]") {
  test::TempDir dir;
  Write(dir / "s.json", R"({"op":"rmsnorm","dtype":"bf16","threads":32,"items":1})");
  Run r = Cli(dir, "render --spec " + dir / "s.json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("flashjit_rmsnorm"));
  r = Cli(dir, "compile --arch sm_90a --spec " + dir / "s.json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("source compiled") && Catch::Contains("registers"));
  r = Cli(dir, "compile --arch sm_90a --spec " + dir / "s.json");
  CHECK_THAT(r.out, Catch::Contains("source cache"));

  Write(dir / "bad.json", R"({"op":"rmsnorm","dtype":"bf16","vec":3})");
  r = Cli(dir, "compile --arch sm_90a --spec " + dir / "bad.json");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("'vec'"));
  r = Cli(dir, "compile --arch sm_99 --spec " + dir / "s.json");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("sm_99"));
  CHECK(Cli(dir, "render --spec /nonexistent.json").code != 0);
  CHECK(Cli(dir, "nosuchcommand").code == 2);
  CHECK(Cli(dir, "cache nosuch").code == 2);
}

TEST_CASE("cli: cache build compiles a manifest once; ls, verify, gc, clear", "[cli]") {
  test::TempDir dir;
  Write(dir / "m.json", R"({"name":"t","variants":[
      {"op":"rmsnorm","dtype":"bf16","threads":32,"items":1},
      {"op":"rmsnorm","dtype":"f16","threads":32,"items":1},
      {"op":"rmsnorm","dtype":"bf16","threads":32,"items":1,"gemma":true}]})");
  Run r = Cli(dir, "cache build --arch sm_90a -j 2 --manifest " + dir / "m.json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("3 variants, 3 compiled, 0 already cached, 0 failed"));
  r = Cli(dir, "cache build --arch sm_90a --manifest " + dir / "m.json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("0 compiled, 3 already cached"));
  r = Cli(dir, "cache ls --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).size() == 3);
  r = Cli(dir, "cache verify");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("3 rows, 0 corrupt"));
  r = Cli(dir, "cache prune");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("removed 0 kernels"));
  r = Cli(dir, "cache gc --max-bytes 0");
  CHECK_THAT(r.out, Catch::Contains("evicted 3"));
  REQUIRE(Cli(dir, "cache build --arch sm_90a --manifest " + dir / "m.json").code == 0);
  CHECK(Cli(dir, "cache clear").code == 0);
  CHECK_THAT(Cli(dir, "cache ls").out, Catch::Contains("0 kernels"));

  Write(dir / "badm.json", R"({"variants":[{"op":"rmsnorm"}]})");
  r = Cli(dir, "cache build --arch sm_90a --manifest " + dir / "badm.json");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("variants[0]") && Catch::Contains("'dtype'"));
}

TEST_CASE("cli: bundle export, inspect, import", "[cli]") {
  test::TempDir dir;
  Write(dir / "m.json", R"({"variants":[{"op":"rmsnorm","dtype":"bf16","threads":32,"items":1}]})");
  REQUIRE(Cli(dir, "cache build --arch sm_90a --manifest " + dir / "m.json").code == 0);
  Run r = Cli(dir, "bundle export --arch sm_90a --out " + dir / "b.fjb");
  REQUIRE(r.code == 0);
  r = Cli(dir, "bundle inspect --json " + dir / "b.fjb");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["count"] == 1);
  CHECK(Cli(dir, "cache clear").code == 0);
  r = Cli(dir, "bundle import " + dir / "b.fjb");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("imported 1"));
  r = Cli(dir, "bundle import --arch sm_90 " + dir / "b.fjb");
  CHECK(r.code != 0);
  CHECK_THAT(r.out, Catch::Contains("arch"));
  r = Cli(dir, "bundle export --arch sm_90 --out " + dir / "none.fjb");
  CHECK(r.code != 0);
  CHECK_THAT(r.out, Catch::Contains("no kernels for arch sm_90"));
}

}  // namespace
}  // namespace flashjit
