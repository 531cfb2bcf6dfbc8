#include "src/cache/bundle.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <filesystem>

#include "build_info.h"
#include "src/codegen/embedded_templates.h"
#include "src/common/sha256.h"
#include "src/compile/compiler.h"

namespace flashjit::cache {
namespace {

// Exactly a decimal integer: no sign tricks, spaces, suffixes or overflow.
bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

Status SignatureVerdict(BundleManifest& m, const std::map<std::string, std::string>& meta,
                        const std::string& path, const BundleTrustPolicy& trust) {
  if (m.signature.empty() && m.signer.empty()) {
    m.signature_state = "unsigned";
    if (trust.require_signed)
      return Status::PermissionDenied(fmt::format(
          "bundle {} refused: it is unsigned and signed bundles are required "
          "(FLASHJIT_REQUIRE_SIGNED_BUNDLES / --require-signed); sign it with `flashjit bundle "
          "export --sign-key KEY.pem`",
          path));
    return Status::Ok();
  }
  if (trust.keys.empty()) {
    m.signature_state =
        fmt::format("not verified: signed by key {}, no trusted key given", m.signer);
    if (trust.require_signed)
      return Status::PermissionDenied(fmt::format(
          "bundle {} refused: signed bundles are required but no trusted key is configured "
          "(FLASHJIT_TRUSTED_KEYS / --trust-key PUB.pem)",
          path));
    return Status::Ok();
  }
  const std::string message = SignedMessage(meta);
  std::string ids;
  for (const PublicKey& k : trust.keys) {
    ids += (ids.empty() ? "" : ", ") + k.id;
    if (k.id != m.signer) continue;
    if (VerifySignature(message, m.signature, k)) {
      m.signature_state = fmt::format("verified (key {})", k.id);
      return Status::Ok();
    }
    m.signature_state = fmt::format("not verified: bad signature for key {}", k.id);
    return Status::Corruption(fmt::format(
        "bundle {} refused: its signature by trusted key {} ({}) does not verify: the manifest "
        "was changed after signing or the signature is damaged",
        path, k.id, k.path));
  }
  m.signature_state = fmt::format("not verified: key {} is not trusted", m.signer);
  return Status::PermissionDenied(
      fmt::format("bundle {} refused: signed by key {}, which is not among the trusted keys ({})",
                  path, m.signer.empty() ? "(none)" : m.signer, ids));
}

}  // namespace

std::map<std::string, std::string> BundleManifest::ToMeta() const {
  std::map<std::string, std::string> meta = {{"format", format},
                                             {"lib_version", lib_version},
                                             {"template_hash", template_hash},
                                             {"nvrtc_version", nvrtc_version},
                                             {"arch", arch},
                                             {"content_hash", content_hash},
                                             {"count", std::to_string(count)},
                                             {"created_at", std::to_string(created_at)}};
  if (!signature.empty()) meta["signature"] = signature;
  if (!signer.empty()) meta["signer"] = signer;
  return meta;
}

Result<BundleManifest> BundleManifest::FromMeta(const std::map<std::string, std::string>& meta) {
  BundleManifest m;
  std::string missing;
  auto get = [&](const char* k) {
    auto it = meta.find(k);
    if (it != meta.end()) return it->second;
    if (std::string(k) != "signature" && std::string(k) != "signer")
      missing += (missing.empty() ? "" : ", ") + std::string(k);
    return std::string();
  };
  m.format = get("format");
  m.lib_version = get("lib_version");
  m.template_hash = get("template_hash");
  m.nvrtc_version = get("nvrtc_version");
  m.arch = get("arch");
  m.content_hash = get("content_hash");
  m.signature = get("signature");
  m.signer = get("signer");
  std::string count = get("count"), created = get("created_at");
  if (!missing.empty()) return Status::Corruption(fmt::format("manifest lacks {}", missing));
  if (!ParseInt(count, &m.count))
    return Status::Corruption(fmt::format("manifest count \"{}\" is not a number", count));
  if (!ParseInt(created, &m.created_at))
    return Status::Corruption(fmt::format("manifest created_at \"{}\" is not a number", created));
  return m;
}

Result<BundleTrustPolicy> MakeTrustPolicy(const std::vector<std::string>& key_files,
                                          bool require_signed) {
  BundleTrustPolicy p;
  p.require_signed = require_signed;
  for (const std::string& f : key_files) {
    auto k = LoadPublicKey(f);
    if (!k.ok()) return k.status().WithContext("trusted bundle key");
    p.keys.push_back(std::move(*k));
  }
  return p;
}

Result<std::string> ContentHash(KernelDb& db) {
  FLASHJIT_ASSIGN_OR_RETURN(auto rows, db.List());
  std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.key < b.key; });
  Sha256 h;
  for (const CacheEntry& e : rows) h.Update(e.key + ":" + e.cubin_sha256 + "\n");
  Sha256Digest d = h.Finish();
  return ToHex(d.data(), d.size());
}

Result<BundleManifest> ExportBundle(KernelDb& from, const std::string& arch,
                                    const std::string& out_path, const std::string& sign_key_pem) {
  FLASHJIT_RETURN_IF_ERROR(compile::ValidateArch(arch));
  FLASHJIT_ASSIGN_OR_RETURN(auto rows, from.ListFull(arch));
  // Only rows built by this library and template set: anything else could never be used.
  std::vector<CacheEntry> current;
  for (auto& e : rows) {
    if (e.lib_version == FLASHJIT_VERSION_STRING && e.template_hash == codegen::TemplateSetHash() &&
        e.nvrtc_version == compile::NvrtcVersion())
      current.push_back(std::move(e));
  }
  if (current.empty())
    return Status::NotFound(fmt::format(
        "no kernels for arch {} built by this flashjit ({}) in {}; run `flashjit cache build "
        "--arch {}` first",
        arch, FLASHJIT_VERSION_STRING, from.path(), arch));
  const std::string tmp = out_path + ".tmp";
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  BundleManifest m;
  {
    FLASHJIT_ASSIGN_OR_RETURN(auto out, KernelDb::Open(tmp, KernelDb::Mode::kReadWrite));
    for (const CacheEntry& e : current) FLASHJIT_RETURN_IF_ERROR(out->Put(e));
    m.format = kBundleFormat;
    m.lib_version = FLASHJIT_VERSION_STRING;
    m.template_hash = codegen::TemplateSetHash();
    m.nvrtc_version = compile::NvrtcVersion();
    m.arch = arch;
    m.count = static_cast<int64_t>(current.size());
    m.created_at = static_cast<int64_t>(std::time(nullptr));
    FLASHJIT_ASSIGN_OR_RETURN(m.content_hash, ContentHash(*out));
    if (!sign_key_pem.empty()) {
      FLASHJIT_ASSIGN_OR_RETURN(m.signature,
                                SignMessage(SignedMessage(m.ToMeta()), sign_key_pem, &m.signer));
      m.signature_state = fmt::format("signed (key {})", m.signer);
    } else {
      m.signature_state = "unsigned";
    }
    FLASHJIT_RETURN_IF_ERROR(out->WriteMeta(m.ToMeta()));
  }
  // Re-open in rollback-journal mode so the file has no -wal companion when shipped.
  {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(tmp.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
      sqlite3_exec(db, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
    }
    sqlite3_close(db);
  }
  std::filesystem::rename(tmp, out_path, ec);
  if (ec) return Status::IOError(fmt::format("cannot write bundle {}: {}", out_path, ec.message()));
  return m;
}

Result<BundleManifest> CheckBundle(KernelDb& bundle, const std::string& expected_arch,
                                   const BundleTrustPolicy& trust) {
  FLASHJIT_ASSIGN_OR_RETURN(auto meta, bundle.ReadMeta());
  auto parsed = BundleManifest::FromMeta(meta);
  if (!parsed.ok())
    return Status::Corruption(
        fmt::format("bundle {} refused: {}", bundle.path(), parsed.status().message()));
  BundleManifest m = std::move(*parsed);
  auto refuse = [&](const char* field, const std::string& have, const std::string& want) {
    return Status::Corruption(
        fmt::format("bundle {} refused: {} is \"{}\", this library needs \"{}\"", bundle.path(),
                    field, have, want));
  };
  if (m.format != kBundleFormat) return refuse("format", m.format, kBundleFormat);
  if (m.lib_version != FLASHJIT_VERSION_STRING)
    return refuse("library version", m.lib_version, FLASHJIT_VERSION_STRING);
  if (m.template_hash != codegen::TemplateSetHash())
    return refuse("template hash", m.template_hash, codegen::TemplateSetHash());
  if (m.nvrtc_version != compile::NvrtcVersion())
    return refuse("NVRTC version", m.nvrtc_version, compile::NvrtcVersion());
  if (!expected_arch.empty() && m.arch != expected_arch)
    return refuse("arch", m.arch, expected_arch);
  FLASHJIT_ASSIGN_OR_RETURN(VerifyReport report, bundle.Verify(false));
  if (!report.integrity_ok)
    return Status::Corruption(fmt::format("bundle {} refused: SQLite integrity check: {}",
                                          bundle.path(), report.integrity_message));
  if (report.bad_rows)
    return Status::Corruption(fmt::format("bundle {} refused: {} corrupt row(s), first: {}",
                                          bundle.path(), report.bad_rows, report.bad_keys[0]));
  if (report.rows != m.count)
    return Status::Corruption(
        fmt::format("bundle {} refused: manifest counts {} kernels, file has {}", bundle.path(),
                    m.count, report.rows));
  FLASHJIT_ASSIGN_OR_RETURN(auto rows, bundle.List());
  for (const CacheEntry& e : rows) {
    if (e.arch != m.arch || e.lib_version != m.lib_version || e.template_hash != m.template_hash ||
        e.nvrtc_version != m.nvrtc_version)
      return Status::Corruption(fmt::format(
          "bundle {} refused: row {} was built for {} by flashjit {} (NVRTC {}), manifest says {} "
          "by {} (NVRTC {})",
          bundle.path(), e.name, e.arch, e.lib_version, e.nvrtc_version, m.arch, m.lib_version,
          m.nvrtc_version));
  }
  FLASHJIT_ASSIGN_OR_RETURN(std::string content, ContentHash(bundle));
  if (content != m.content_hash)
    return Status::Corruption(fmt::format("bundle {} refused: content hash {} != manifest {}",
                                          bundle.path(), content, m.content_hash));
  FLASHJIT_RETURN_IF_ERROR(SignatureVerdict(m, meta, bundle.path(), trust));
  return m;
}

Result<int64_t> ImportBundle(const std::string& path, KernelDb& into,
                             const std::string& expected_arch, const BundleTrustPolicy& trust) {
  FLASHJIT_ASSIGN_OR_RETURN(auto bundle, KernelDb::Open(path, KernelDb::Mode::kImmutable));
  FLASHJIT_RETURN_IF_ERROR(CheckBundle(*bundle, expected_arch, trust).status());
  FLASHJIT_ASSIGN_OR_RETURN(auto rows, bundle->ListFull(""));
  FLASHJIT_ASSIGN_OR_RETURN(auto before, into.List());
  for (const CacheEntry& e : rows) FLASHJIT_RETURN_IF_ERROR(into.Put(e));
  FLASHJIT_ASSIGN_OR_RETURN(auto after, into.List());
  return static_cast<int64_t>(after.size() - before.size());
}

}  // namespace flashjit::cache
