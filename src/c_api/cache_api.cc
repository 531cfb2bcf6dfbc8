// C ABI: the CLI's cache and bundle commands (ls, verify, gc, clear; export, import, inspect).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "src/c_api/c_api_internal.h"
#include "src/c_api/json_out.h"

namespace flashjit::capi {

nlohmann::json KernelInfoJson(const KernelInfo& k) {
  return {{"key", k.key},
          {"name", k.name},
          {"arch", k.arch},
          {"op", k.op},
          {"source", k.source},
          {"compile_ms", k.compile_ms},
          {"fetch_ms", k.fetch_ms},
          {"registers", k.registers},
          {"spill_bytes", k.spill_bytes},
          {"stack_bytes", k.stack_bytes},
          {"static_smem", k.static_smem},
          {"cubin_size", k.cubin_size}};
}

nlohmann::json CachedKernelJson(const CachedKernel& k) {
  return {{"key", k.key},
          {"name", k.name},
          {"op", k.op},
          {"arch", k.arch},
          {"spec", k.spec},
          {"lib_version", k.lib_version},
          {"nvrtc_version", k.nvrtc_version},
          {"current", k.current},
          {"cubin_size", k.cubin_size},
          {"compile_ms", k.compile_ms},
          {"registers", k.registers},
          {"spill_bytes", k.spill_bytes},
          {"stack_bytes", k.stack_bytes},
          {"static_smem", k.static_smem},
          {"created_at", k.created_at},
          {"last_used", k.last_used},
          {"use_count", k.use_count}};
}

nlohmann::json BundleInfoJson(const BundleInfo& b) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const CachedKernel& k : b.kernels) kernels.push_back(CachedKernelJson(k));
  return {{"path", b.path},
          {"format", b.format},
          {"lib_version", b.lib_version},
          {"template_hash", b.template_hash},
          {"nvrtc_version", b.nvrtc_version},
          {"arch", b.arch},
          {"content_hash", b.content_hash},
          {"count", b.count},
          {"created_at", b.created_at},
          {"signer", b.signer},
          {"signature", b.signature},
          {"ok", b.check.ok()},
          {"check", b.check.ToString()},
          {"kernels", kernels}};
}

}  // namespace flashjit::capi

using namespace flashjit;
using namespace flashjit::capi;

extern "C" {

flashjit_status flashjit_cache_ls(flashjit_engine* handle, char* buf, size_t size, size_t* needed) {
  const char* fn = "flashjit_cache_ls";
  std::string text;
  flashjit_status rc = WithEngine(fn, handle, [&](Engine& e) -> Status {
    FLASHJIT_ASSIGN_OR_RETURN(auto rows, e.ListCache());
    nlohmann::json j = nlohmann::json::array();
    for (const CachedKernel& k : rows) j.push_back(CachedKernelJson(k));
    text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    return Status::Ok();
  });
  return rc != FLASHJIT_OK ? rc : QueryResult(text, buf, size, needed, fn);
}

flashjit_status flashjit_cache_verify(flashjit_engine* handle, int repair, int64_t* rows,
                                      int64_t* bad_rows, int64_t* removed, char* buf, size_t size,
                                      size_t* needed) {
  return WithEngine("flashjit_cache_verify", handle, [&](Engine& e) -> Status {
    FLASHJIT_ASSIGN_OR_RETURN(CacheVerifyReport r, e.VerifyCache(repair != 0));
    if (rows) *rows = r.rows;
    if (bad_rows) *bad_rows = r.bad_rows;
    if (removed) *removed = r.removed;
    nlohmann::json j = {{"rows", r.rows},
                        {"bad_rows", r.bad_rows},
                        {"removed", r.removed},
                        {"integrity_ok", r.integrity_ok},
                        {"integrity_message", r.integrity_message},
                        {"problems", r.problems}};
    CopyOut(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace), buf, size, needed);
    return Status::Ok();
  });
}

flashjit_status flashjit_cache_gc(flashjit_engine* handle, int64_t max_bytes, int64_t* evicted) {
  return WithEngine("flashjit_cache_gc", handle, [&](Engine& e) -> Status {
    if (max_bytes < 0)
      return Status::InvalidArgument(fmt::format("max_bytes = {}: expected >= 0", max_bytes));
    FLASHJIT_ASSIGN_OR_RETURN(int64_t n, e.GarbageCollectCache(max_bytes));
    if (evicted) *evicted = n;
    return Status::Ok();
  });
}

flashjit_status flashjit_cache_prune(flashjit_engine* handle, int64_t* removed) {
  return WithEngine("flashjit_cache_prune", handle, [&](Engine& e) -> Status {
    FLASHJIT_ASSIGN_OR_RETURN(int64_t n, e.PruneCache());
    if (removed) *removed = n;
    return Status::Ok();
  });
}

flashjit_status flashjit_cache_clear(flashjit_engine* handle) {
  return WithEngine("flashjit_cache_clear", handle, [&](Engine& e) { return e.ClearCache(); });
}

flashjit_status flashjit_bundle_export(flashjit_engine* handle, const char* arch, const char* path,
                                       const char* sign_key_pem, char* buf, size_t size,
                                       size_t* needed) {
  return WithEngine("flashjit_bundle_export", handle, [&](Engine& e) -> Status {
    if (!arch || !*arch) return Status::InvalidArgument("arch is NULL or empty (e.g. \"sm_90a\")");
    if (!path || !*path) return Status::InvalidArgument("path is NULL or empty");
    FLASHJIT_ASSIGN_OR_RETURN(BundleInfo info, e.ExportBundle(arch, path, Str(sign_key_pem)));
    CopyOut(BundleInfoJson(info).dump(2, ' ', false, nlohmann::json::error_handler_t::replace), buf,
            size, needed);
    return Status::Ok();
  });
}

flashjit_status flashjit_bundle_import(flashjit_engine* handle, const char* path, const char* arch,
                                       int64_t* added) {
  return WithEngine("flashjit_bundle_import", handle, [&](Engine& e) -> Status {
    if (!path || !*path) return Status::InvalidArgument("path is NULL or empty");
    FLASHJIT_ASSIGN_OR_RETURN(int64_t n, e.ImportBundle(path, Str(arch)));
    if (added) *added = n;
    return Status::Ok();
  });
}

flashjit_status flashjit_bundle_inspect(const char* path, char* buf, size_t size, size_t* needed) {
  const char* fn = "flashjit_bundle_inspect";
  std::string text;
  flashjit_status rc = Guard(fn, [&]() -> Status {
    if (!path || !*path) return Status::InvalidArgument("path is NULL or empty");
    FLASHJIT_ASSIGN_OR_RETURN(BundleInfo info, InspectBundle(path));
    text = BundleInfoJson(info).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    return Status::Ok();
  });
  return rc != FLASHJIT_OK ? rc : QueryResult(text, buf, size, needed, fn);
}

flashjit_status flashjit_bundle_inspect_trusted(const char* path, const char* trusted_keys,
                                                int require_signed, char* buf, size_t size,
                                                size_t* needed) {
  const char* fn = "flashjit_bundle_inspect_trusted";
  std::string text;
  flashjit_status rc = Guard(fn, [&]() -> Status {
    if (!path || !*path) return Status::InvalidArgument("path is NULL or empty");
    BundleTrust trust;
    trust.trusted_key_files = SplitColonList(trusted_keys);
    trust.require_signed = require_signed != 0;
    // A key file that cannot be read is an error (never a silent "not verified").
    FLASHJIT_ASSIGN_OR_RETURN(BundleInfo info, InspectBundle(path, trust));
    text = BundleInfoJson(info).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    return Status::Ok();
  });
  return rc != FLASHJIT_OK ? rc : QueryResult(text, buf, size, needed, fn);
}

flashjit_status flashjit_bundle_keygen(const char* private_pem, const char* public_pem, char* buf,
                                       size_t size, size_t* needed) {
  const char* fn = "flashjit_bundle_keygen";
  std::string key_id;
  flashjit_status rc = Guard(fn, [&]() -> Status {
    if (!private_pem || !*private_pem)
      return Status::InvalidArgument("private_pem is NULL or empty");
    if (!public_pem || !*public_pem) return Status::InvalidArgument("public_pem is NULL or empty");
    FLASHJIT_ASSIGN_OR_RETURN(key_id, GenerateBundleSigningKey(private_pem, public_pem));
    return Status::Ok();
  });
  if (rc != FLASHJIT_OK) return rc;
  CopyOut(key_id, buf, size, needed);  // the keys are written: the id is reported as it fits
  return FLASHJIT_OK;
}

}  // extern "C"
