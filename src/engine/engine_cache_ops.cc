// Engine methods that manage the writable cache and bundles (for the CLI and C ABI).
#include <fmt/format.h>

#include "build_info.h"
#include "src/cache/bundle.h"
#include "src/codegen/embedded_templates.h"
#include "src/compile/compiler.h"
#include "src/engine/engine_impl.h"

namespace flashjit {
namespace {

CachedKernel ToCached(const cache::CacheEntry& e) {
  CachedKernel k;
  k.key = e.key;
  k.name = e.name;
  k.op = e.op;
  k.arch = e.arch;
  k.spec = e.spec;
  k.lib_version = e.lib_version;
  k.nvrtc_version = e.nvrtc_version;
  k.current = e.lib_version == FLASHJIT_VERSION_STRING &&
              e.template_hash == codegen::TemplateSetHash() &&
              e.nvrtc_version == compile::NvrtcVersion();
  k.cubin_size = e.cubin_size;
  k.compile_ms = e.compile_ms;
  k.registers = e.registers;
  k.spill_bytes = e.spill_bytes;
  k.stack_bytes = e.stack_bytes;
  k.static_smem = e.static_smem;
  k.created_at = e.created_at;
  k.last_used = e.last_used;
  k.use_count = e.use_count;
  return k;
}

BundleInfo ToBundleInfo(const std::string& path, const cache::BundleManifest& m) {
  BundleInfo b;
  b.path = path;
  b.format = m.format;
  b.lib_version = m.lib_version;
  b.template_hash = m.template_hash;
  b.nvrtc_version = m.nvrtc_version;
  b.arch = m.arch;
  b.content_hash = m.content_hash;
  b.count = m.count;
  b.created_at = m.created_at;
  b.signer = m.signer;
  b.signature = m.signature_state;
  return b;
}

}  // namespace

Result<cache::KernelDb*> Engine::Impl::WritableDb() const {
  if (!db_) return Status::NotFound("this engine has no kernel cache: " + config_.cache_warning);
  return db_.get();
}

Result<std::vector<CachedKernel>> Engine::ListCache() const {
  FLASHJIT_ASSIGN_OR_RETURN(cache::KernelDb * db, impl_->WritableDb());
  FLASHJIT_ASSIGN_OR_RETURN(auto rows, db->List());
  std::vector<CachedKernel> out;
  for (const auto& e : rows) out.push_back(ToCached(e));
  return out;
}

Result<CacheVerifyReport> Engine::VerifyCache(bool repair) {
  FLASHJIT_ASSIGN_OR_RETURN(cache::KernelDb * db, impl_->WritableDb());
  FLASHJIT_ASSIGN_OR_RETURN(cache::VerifyReport r, db->Verify(repair));
  CacheVerifyReport out;
  out.rows = r.rows;
  out.bad_rows = r.bad_rows;
  out.removed = repair && db->writable() ? r.bad_rows : 0;
  out.integrity_ok = r.integrity_ok;
  out.integrity_message = r.integrity_message;
  out.problems = r.bad_keys;
  return out;
}

Result<int64_t> Engine::GarbageCollectCache(int64_t max_bytes) {
  if (max_bytes < 0)
    return Status::InvalidArgument(fmt::format("max_bytes: must be >= 0, got {}", max_bytes));
  FLASHJIT_ASSIGN_OR_RETURN(cache::KernelDb * db, impl_->WritableDb());
  return db->GarbageCollect(max_bytes);
}

Result<int64_t> Engine::PruneCache() {
  FLASHJIT_ASSIGN_OR_RETURN(cache::KernelDb * db, impl_->WritableDb());
  // The same test as CachedKernel::current (ListCache).
  return db->DeleteOtherVersions(FLASHJIT_VERSION_STRING, codegen::TemplateSetHash(),
                                 compile::NvrtcVersion());
}

Status Engine::ClearCache() {
  FLASHJIT_ASSIGN_OR_RETURN(cache::KernelDb * db, impl_->WritableDb());
  return db->Clear();
}

Result<BundleInfo> Engine::ExportBundle(const std::string& arch, const std::string& path,
                                        const std::string& sign_key_pem) {
  FLASHJIT_ASSIGN_OR_RETURN(cache::KernelDb * db, impl_->WritableDb());
  FLASHJIT_ASSIGN_OR_RETURN(cache::BundleManifest m,
                            cache::ExportBundle(*db, arch, path, sign_key_pem));
  return ToBundleInfo(path, m);
}

Result<int64_t> Engine::ImportBundle(const std::string& path, const std::string& arch) {
  FLASHJIT_ASSIGN_OR_RETURN(cache::KernelDb * db, impl_->WritableDb());
  if (!db->writable())
    return Status::PermissionDenied(
        fmt::format("cannot import into read-only cache {}", db->path()));
  return cache::ImportBundle(path, *db, arch, impl_->trust());
}

Result<BundleInfo> InspectBundle(const std::string& path, const BundleTrust& trust) {
  FLASHJIT_ASSIGN_OR_RETURN(cache::BundleTrustPolicy policy,
                            cache::MakeTrustPolicy(trust.trusted_key_files, trust.require_signed));
  FLASHJIT_ASSIGN_OR_RETURN(auto db,
                            cache::KernelDb::Open(path, cache::KernelDb::Mode::kImmutable));
  FLASHJIT_ASSIGN_OR_RETURN(auto meta, db->ReadMeta());
  auto checked = cache::CheckBundle(*db, "", policy);
  BundleInfo info;
  if (checked.ok()) {
    info = ToBundleInfo(path, *checked);
  } else {
    auto m = cache::BundleManifest::FromMeta(meta);
    info = m.ok() ? ToBundleInfo(path, *m) : BundleInfo{};
    info.path = path;
    info.signer = m.ok() ? m->signer : "";
    info.signature = "not checked (bundle refused)";
    info.check = checked.status();
  }
  FLASHJIT_ASSIGN_OR_RETURN(auto rows, db->List());
  for (const auto& e : rows) info.kernels.push_back(ToCached(e));
  return info;
}

Result<std::string> GenerateBundleSigningKey(const std::string& private_pem,
                                             const std::string& public_pem) {
  return cache::GenerateKeyPair(private_pem, public_pem);
}

}  // namespace flashjit
