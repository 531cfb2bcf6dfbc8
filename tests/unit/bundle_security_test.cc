// Bundles: exact (not prefix) version and arch checks, strict manifests, tampering, truncation,
// and Ed25519 signatures with a mode that refuses unsigned bundles.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "build_info.h"
#include "src/cache/bundle.h"
#include "src/compile/compiler.h"
#include "tests/unit/reliability_util.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

using cache::KernelDb;
using test::TempDir;

// A bundle of 3 fake sm_90a kernels at `path`, signed with `sign_key` when given.
void MakeBundle(const TempDir& dir, const std::string& path, const std::string& sign_key = "") {
  auto src = KernelDb::Open(dir / "src.db", KernelDb::Mode::kReadWrite);
  REQUIRE(src.ok());
  for (int i = 0; i < 3; ++i)
    REQUIRE((*src)->Put(test::FakeEntry(test::Variant(i), 500 + i, uint8_t(i))).ok());
  auto m = cache::ExportBundle(**src, "sm_90a", path, sign_key);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
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

Status Check(const std::string& path, const std::string& arch = "",
             const cache::BundleTrustPolicy& trust = {}) {
  auto db = KernelDb::Open(path, KernelDb::Mode::kImmutable);
  if (!db.ok()) return db.status();
  return cache::CheckBundle(**db, arch, trust).status();
}

cache::BundleTrustPolicy Trust(const std::vector<std::string>& keys, bool require) {
  auto p = cache::MakeTrustPolicy(keys, require);
  REQUIRE(p.ok());
  return *p;
}

}  // namespace

TEST_CASE("bundles: version, templates, NVRTC and arch must match exactly", "[bundle][security]") {
  TempDir dir;
  MakeBundle(dir, dir / "good.fjb");
  REQUIRE(Check(dir / "good.fjb").ok());
  const std::string v = FLASHJIT_VERSION_STRING, nvrtc = compile::NvrtcVersion();
  struct Case {
    std::string key, value, field;
  };
  std::vector<Case> cases = {
      {"lib_version", v + "1", "library version"},                    // "0.1.0" vs "0.1.01"
      {"lib_version", v + ".1", "library version"},                   // "0.1.0.1"
      {"lib_version", v + " ", "library version"},                    // trailing space
      {"lib_version", v.substr(0, v.size() - 1), "library version"},  // "0.1." (a prefix)
      {"lib_version", "", "library version"},
      {"nvrtc_version", nvrtc + "0", "NVRTC version"},
      {"nvrtc_version", nvrtc.substr(0, nvrtc.size() - 1), "NVRTC version"},
      {"template_hash", "00", "template hash"},
      {"format", "flashjit-bundle-10", "format"},
      {"count", "3 ", "count"},
      {"count", "+3", "count"},
      {"count", "0x3", "count"},
      {"count", "4", "manifest counts 4"},
      {"content_hash", "0", "content hash"},
  };
  for (const Case& c : cases) {
    INFO(c.key << " = \"" << c.value << "\"");
    std::filesystem::copy_file(dir / "good.fjb", dir / "bad.fjb",
                               std::filesystem::copy_options::overwrite_existing);
    Sql(dir / "bad.fjb", "UPDATE meta SET v = '" + c.value + "' WHERE k = '" + c.key + "'");
    Status s = Check(dir / "bad.fjb");
    CHECK_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains(c.field) && Catch::Contains("refused"));
  }
  // Arch: sm_90 is not sm_90a, either way round.
  Status s = Check(dir / "good.fjb", "sm_90");
  CHECK_THAT(s.message(), Catch::Contains("arch") && Catch::Contains("\"sm_90a\""));
  std::filesystem::copy_file(dir / "good.fjb", dir / "arch.fjb");
  Sql(dir / "arch.fjb", "UPDATE meta SET v = 'sm_90' WHERE k = 'arch'");
  s = Check(dir / "arch.fjb");
  CHECK_THAT(s.message(), Catch::Contains("built for sm_90a"));
  // A missing manifest field.
  std::filesystem::copy_file(dir / "good.fjb", dir / "nofield.fjb");
  Sql(dir / "nofield.fjb", "DELETE FROM meta WHERE k = 'nvrtc_version'");
  CHECK_THAT(Check(dir / "nofield.fjb").message(), Catch::Contains("lacks nvrtc_version"));
}

TEST_CASE("bundles: tampered and truncated files are refused with the reason",
          "[bundle][security]") {
  TempDir dir;
  MakeBundle(dir, dir / "good.fjb");
  auto tamper = [&](const std::string& sql) {
    std::filesystem::copy_file(dir / "good.fjb", dir / "t.fjb",
                               std::filesystem::copy_options::overwrite_existing);
    Sql(dir / "t.fjb", sql);
    return Check(dir / "t.fjb");
  };
  // A cubin replaced, with its hash updated to match: the content hash catches it.
  Status s = tamper(
      "UPDATE kernels SET cubin = X'00112233', cubin_size = 4, cubin_sha256 = "
      "'8cc1b5f6a2d7bd8e3b2a2e2b5e9d8b1c3a6cb4e8cb6d3e86dbb2f0fde1bd6cf3' "
      "WHERE rowid = 1");
  CHECK_FALSE(s.ok());
  s = tamper("UPDATE kernels SET cubin = X'00112233' WHERE rowid = 1");
  CHECK_THAT(s.message(), Catch::Contains("corrupt row"));
  s = tamper("DELETE FROM kernels WHERE rowid = 1");
  CHECK_THAT(s.message(), Catch::Contains("manifest counts 3"));
  s = tamper(
      "UPDATE kernels SET spec = (SELECT spec FROM kernels WHERE rowid = 2) WHERE rowid = 1");
  CHECK_THAT(s.message(), Catch::Contains("not the hash of the row"));
  // Truncated at several lengths: never accepted, never a crash.
  const auto size = std::filesystem::file_size(dir / "good.fjb");
  for (auto cut : {size / 8, size / 3, size / 2, size - 1000, size - 1}) {
    std::filesystem::copy_file(dir / "good.fjb", dir / "cut.fjb",
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(dir / "cut.fjb", cut);
    INFO("truncated to " << cut << " of " << size);
    CHECK_FALSE(Check(dir / "cut.fjb").ok());
    auto info = InspectBundle(dir / "cut.fjb");
    CHECK((!info.ok() || !info->check.ok()));
  }
}

TEST_CASE("bundles: Ed25519 signatures, trusted keys and the signed-only mode",
          "[bundle][security]") {
  TempDir dir;
  REQUIRE(GenerateBundleSigningKey(dir / "k.pem", dir / "k.pub.pem").ok());
  REQUIRE(GenerateBundleSigningKey(dir / "other.pem", dir / "other.pub.pem").ok());
  CHECK_FALSE(GenerateBundleSigningKey(dir / "k.pem", dir / "x.pub.pem").ok());  // no overwrite
  MakeBundle(dir, dir / "signed.fjb", dir / "k.pem");
  std::filesystem::remove(dir / "src.db");
  MakeBundle(dir, dir / "unsigned.fjb");

  auto trusted = Trust({dir / "k.pub.pem"}, false);
  auto strict = Trust({dir / "k.pub.pem"}, true);
  CHECK(Check(dir / "signed.fjb", "", trusted).ok());
  CHECK(Check(dir / "signed.fjb", "", strict).ok());
  CHECK(Check(dir / "signed.fjb").ok());  // no keys: accepted as if unsigned
  CHECK(Check(dir / "unsigned.fjb", "", trusted).ok());
  Status s = Check(dir / "unsigned.fjb", "", strict);
  CHECK(s.code() == StatusCode::kPermissionDenied);
  CHECK_THAT(s.message(), Catch::Contains("unsigned"));
  s = Check(dir / "signed.fjb", "", Trust({dir / "other.pub.pem"}, false));
  CHECK(s.code() == StatusCode::kPermissionDenied);
  CHECK_THAT(s.message(), Catch::Contains("not among the trusted keys"));
  s = Check(dir / "signed.fjb", "", Trust({}, true));
  CHECK_THAT(s.message(), Catch::Contains("no trusted key"));

  // Any manifest change after signing breaks the signature, even with hashes recomputed.
  for (std::string sql : {"UPDATE meta SET v = '1' WHERE k = 'created_at'",
                          "INSERT INTO meta (k, v) VALUES ('extra', 'x')",
                          "UPDATE meta SET v = substr(v, 1, 127) || "
                          "(CASE substr(v, 128, 1) WHEN '0' THEN '1' ELSE '0' END) "
                          "WHERE k = 'signature'"}) {
    std::filesystem::copy_file(dir / "signed.fjb", dir / "t.fjb",
                               std::filesystem::copy_options::overwrite_existing);
    Sql(dir / "t.fjb", sql);
    INFO(sql);
    s = Check(dir / "t.fjb", "", trusted);
    CHECK(s.code() == StatusCode::kCorruption);
    CHECK_THAT(s.message(), Catch::Contains("does not verify"));
  }
  // Re-signed by an attacker's key: refused by the trusted key's policy.
  std::filesystem::copy_file(dir / "signed.fjb", dir / "resigned.fjb");
  {
    auto db = KernelDb::Open(dir / "resigned.fjb", KernelDb::Mode::kReadOnly);
    REQUIRE(db.ok());
    auto meta = (*db)->ReadMeta();
    REQUIRE(meta.ok());
    std::string id;
    auto sig = cache::SignMessage(cache::SignedMessage(*meta), dir / "other.pem", &id);
    REQUIRE(sig.ok());
    db->reset();
    Sql(dir / "resigned.fjb", "UPDATE meta SET v = '" + *sig +
                                  "' WHERE k = 'signature';"
                                  "UPDATE meta SET v = '" +
                                  id + "' WHERE k = 'signer'");
  }
  CHECK(Check(dir / "resigned.fjb", "", Trust({dir / "other.pub.pem"}, true)).ok());
  CHECK(Check(dir / "resigned.fjb", "", strict).code() == StatusCode::kPermissionDenied);

  // As FLASHJIT_BUNDLES layers: refused bundles are skipped, accepted ones serve kernels.
  EngineOptions o;
  o.read_environment = false;
  o.arch = "sm_90a";
  o.dry_run = true;
  o.disable_cache = true;
  o.disable_jit = true;
  o.bundles = {dir / "unsigned.fjb", dir / "signed.fjb"};
  o.trusted_bundle_keys = {dir / "k.pub.pem"};
  o.require_signed_bundles = true;
  auto e = Engine::Create(o);
  REQUIRE(e.ok());
  REQUIRE((*e)->config().bundles.size() == 1);
  CHECK((*e)->config().bundles[0] == dir / "signed.fjb");
  auto info = (*e)->Build(test::Variant(1));
  REQUIRE(info.ok());
  CHECK_THAT(info->source, Catch::StartsWith("bundle:"));
  // The environment switch does the same.
  setenv("FLASHJIT_REQUIRE_SIGNED_BUNDLES", "1", 1);
  o.read_environment = true;
  o.trusted_bundle_keys.clear();
  o.bundles = {dir / "signed.fjb"};
  auto env_engine = Engine::Create(o);
  unsetenv("FLASHJIT_REQUIRE_SIGNED_BUNDLES");
  REQUIRE(env_engine.ok());
  CHECK((*env_engine)->config().require_signed_bundles);
  CHECK((*env_engine)->config().bundles.empty());  // signed, but no trusted key configured
  // A key file that cannot be read is an error at creation, not a silent downgrade.
  o.read_environment = false;
  o.trusted_bundle_keys = {dir / "missing.pub.pem"};
  CHECK_FALSE(Engine::Create(o).ok());
}

TEST_CASE("bundles: keygen, signed export, inspect and import through the CLI",
          "[bundle][security][cli]") {
  TempDir dir;
  auto cli = [&](const std::string& args) {
    return test::RunShell(test::CliCommand(args + " --cache-dir " + dir / "cache"));
  };
  auto r = cli("bundle keygen --out " + dir / "ship");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK((std::filesystem::status(dir / "ship.pem").permissions() &
         std::filesystem::perms::others_read) == std::filesystem::perms::none);
  std::ofstream(dir / "v.json") << test::VariantJson(0);
  REQUIRE(cli("compile --arch sm_90a --spec " + dir / "v.json").code == 0);
  r = cli("bundle export --arch sm_90a --out " + dir / "b.fjb" + " --sign-key " + dir / "ship.pem");
  INFO(r.out);
  REQUIRE(r.code == 0);
  r = cli("bundle inspect " + dir / "b.fjb" + " --trust-key " + dir / "ship.pub.pem");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("signature: verified"));
  REQUIRE(cli("bundle keygen --out " + dir / "evil").code == 0);
  r = cli("bundle import " + dir / "b.fjb" + " --trust-key " + dir / "evil.pub.pem");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("not among the trusted keys"));
  REQUIRE(cli("bundle export --arch sm_90a --out " + dir / "u.fjb").code == 0);
  r = cli("bundle import --require-signed --trust-key " + dir / "ship.pub.pem" + " " +
          dir / "u.fjb");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("unsigned"));
  r = cli("bundle import --require-signed --trust-key " + dir / "ship.pub.pem" + " " +
          dir / "b.fjb");
  INFO(r.out);
  CHECK(r.code == 0);
}

}  // namespace flashjit
