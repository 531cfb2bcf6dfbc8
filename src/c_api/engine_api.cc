// C ABI: engine create/destroy, show-config, spec-ops, render, build, stats.
#include <flashjit/device.h>
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "src/c_api/c_api_internal.h"
#include "src/c_api/json_out.h"

namespace flashjit::capi {

std::string Str(const char* s) { return s ? std::string(s) : std::string(); }

std::vector<std::string> SplitColonList(const char* s) {
  std::vector<std::string> out;
  if (!s) return out;
  std::string cur;
  for (const char* p = s;; ++p) {
    if (*p == ':' || *p == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  return out;
}

namespace {

EngineOptions ToOptions(const flashjit_engine_options& o) {
  EngineOptions e;
  e.cache_dir = Str(o.cache_dir);
  e.disable_cache = o.disable_cache != 0;
  e.bundles = SplitColonList(o.bundles);
  e.arch = Str(o.arch);
  e.cuda_include_dir = Str(o.cuda_include_dir);
  e.disable_jit = o.disable_jit != 0;
  e.always_compile = o.always_compile != 0;
  e.dump_dir = Str(o.dump_dir);
  e.dry_run = o.dry_run != 0;
  e.compile_wait_ms = o.compile_wait_ms;
  e.trusted_bundle_keys = SplitColonList(o.trusted_bundle_keys);
  e.require_signed_bundles = o.require_signed_bundles != 0;
  e.read_environment = o.read_environment != 0;
  return e;
}

nlohmann::json ConfigJson(Engine& engine) {
  const EngineConfig& c = engine.config();
  nlohmann::json j;
  j["library_version"] = c.library_version;
  j["c_abi_version"] = FLASHJIT_C_ABI_VERSION;
  j["template_hash"] = c.template_hash;
  j["nvrtc_version"] = c.nvrtc_version;
  j["cuda_include_dir"] = c.cuda_include_dir;
  j["arch"] = c.arch;
  auto driver = CudaDriverVersion();
  j["driver"] = driver.ok() ? fmt::format("CUDA {}.{}", *driver / 1000, (*driver % 1000) / 10)
                            : driver.status().message();
  nlohmann::json gpus = nlohmann::json::array();
  if (auto list = ListGpus(); list.ok()) {
    for (const GpuInfo& g : *list)
      gpus.push_back({{"ordinal", g.ordinal},
                      {"name", g.name},
                      {"arch", g.arch},
                      {"sms", g.sm_count},
                      {"memory_bytes", g.total_mem}});
  }
  j["gpus"] = gpus;
  j["cache_path"] = c.cache_path;
  j["cache_writable"] = c.cache_writable;
  j["cache_warning"] = c.cache_warning;
  j["cache_journal"] = c.cache_journal;
  std::error_code ec;
  j["cache_bytes"] = c.cache_path.empty() ? 0 : std::filesystem::file_size(c.cache_path, ec);
  j["bundles"] = c.bundles;
  j["disable_jit"] = c.disable_jit;
  j["always_compile"] = c.always_compile;
  j["dry_run"] = c.dry_run;
  j["dump_dir"] = c.dump_dir;
  j["compile_wait_ms"] = c.compile_wait_ms;
  j["trusted_bundle_keys"] = c.trusted_bundle_keys;
  j["require_signed_bundles"] = c.require_signed_bundles;
  nlohmann::json ops = nlohmann::json::array();
  for (const SpecOpInfo& op : ListSpecOps()) ops.push_back(op.op);
  j["ops"] = ops;
  EngineStats s = engine.stats();
  j["stats"] = {{"compiles", s.compiles},           {"compile_failures", s.compile_failures},
                {"memory_hits", s.memory_hits},     {"cache_hits", s.cache_hits},
                {"bundle_hits", s.bundle_hits},     {"module_loads", s.module_loads},
                {"compile_waits", s.compile_waits}, {"store_failures", s.store_failures}};
  return j;
}

}  // namespace
}  // namespace flashjit::capi

using namespace flashjit;
using namespace flashjit::capi;

extern "C" {

void flashjit_engine_options_init(flashjit_engine_options* o) {
  if (!o) return;
  *o = flashjit_engine_options{};
  o->struct_size = sizeof(flashjit_engine_options);
  o->compile_wait_ms = EngineOptions().compile_wait_ms;
  o->read_environment = 1;
}

flashjit_status flashjit_engine_create(const flashjit_engine_options* options,
                                       flashjit_engine** out) {
  return Guard("flashjit_engine_create", [&]() -> Status {
    if (!out) return Status::InvalidArgument("engine: output pointer is NULL");
    *out = nullptr;
    flashjit_engine_options defaults;
    flashjit_engine_options_init(&defaults);
    if (options && options->struct_size != sizeof(flashjit_engine_options))
      return Status::InvalidArgument(fmt::format(
          "options.struct_size is {}, expected {}: call flashjit_engine_options_init() first "
          "(or the header and library differ)",
          options->struct_size, sizeof(flashjit_engine_options)));
    FLASHJIT_ASSIGN_OR_RETURN(auto engine,
                              Engine::Create(ToOptions(options ? *options : defaults)));
    auto* handle = new flashjit_engine{std::move(engine)};
    RegisterHandle(handle, HandleKind::kEngine);
    *out = handle;
    return Status::Ok();
  });
}

flashjit_status flashjit_engine_destroy(flashjit_engine* handle) {
  const char* fn = "flashjit_engine_destroy";
  if (!handle) return FLASHJIT_OK;
  try {
    if (!UnregisterHandle(handle, HandleKind::kEngine))
      return SetError(FLASHJIT_INVALID_HANDLE, fn, HandleError(handle, "engine"));
    // The struct stays allocated (a tombstone) so that its address is never reused for a new
    // handle; calls already holding the engine finish with it.
    handle->engine.reset();
    return FLASHJIT_OK;
  } catch (...) {
    return SetError(FLASHJIT_INTERNAL, fn, "unexpected C++ exception while destroying");
  }
}

flashjit_status flashjit_engine_show_config(flashjit_engine* handle, char* buf, size_t size,
                                            size_t* needed) {
  const char* fn = "flashjit_engine_show_config";
  std::string text;
  flashjit_status rc = WithEngine(fn, handle, [&](Engine& e) -> Status {
    text = ConfigJson(e).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    return Status::Ok();
  });
  return rc != FLASHJIT_OK ? rc : QueryResult(text, buf, size, needed, fn);
}

flashjit_status flashjit_spec_ops(char* buf, size_t size, size_t* needed) {
  const char* fn = "flashjit_spec_ops";
  std::string text;
  flashjit_status rc = Guard(fn, [&]() -> Status {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& op : ListSpecOps()) {
      nlohmann::json fields = nlohmann::json::array();
      for (const auto& f : op.fields)
        fields.push_back({{"name", f.name},
                          {"type", f.type},
                          {"default", f.default_value},
                          {"allowed", f.allowed},
                          {"doc", f.doc}});
      j.push_back({{"op", op.op}, {"doc", op.doc}, {"fields", fields}});
    }
    text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    return Status::Ok();
  });
  return rc != FLASHJIT_OK ? rc : QueryResult(text, buf, size, needed, fn);
}

flashjit_status flashjit_engine_render(flashjit_engine* handle, const char* spec_json, char* buf,
                                       size_t size, size_t* needed) {
  const char* fn = "flashjit_engine_render";
  std::string text;
  flashjit_status rc = WithEngine(fn, handle, [&](Engine& e) -> Status {
    if (!spec_json) return Status::InvalidArgument("spec_json is NULL");
    FLASHJIT_ASSIGN_OR_RETURN(VariantSpec spec, VariantSpec::FromJson(spec_json));
    FLASHJIT_ASSIGN_OR_RETURN(text, e.Render(spec));
    return Status::Ok();
  });
  return rc != FLASHJIT_OK ? rc : QueryResult(text, buf, size, needed, fn);
}

flashjit_status flashjit_engine_build(flashjit_engine* handle, const char* spec_json,
                                      const char* arch, char* buf, size_t size, size_t* needed) {
  return WithEngine("flashjit_engine_build", handle, [&](Engine& e) -> Status {
    if (!spec_json) return Status::InvalidArgument("spec_json is NULL");
    FLASHJIT_ASSIGN_OR_RETURN(VariantSpec spec, VariantSpec::FromJson(spec_json));
    FLASHJIT_ASSIGN_OR_RETURN(KernelInfo k, e.Build(spec, Str(arch)));
    CopyOut(KernelInfoJson(k).dump(2, ' ', false, nlohmann::json::error_handler_t::replace), buf,
            size, needed);
    return Status::Ok();
  });
}

flashjit_status flashjit_engine_get_stats(flashjit_engine* handle, flashjit_engine_stats* out) {
  return WithEngine("flashjit_engine_get_stats", handle, [&](Engine& e) -> Status {
    if (!out) return Status::InvalidArgument("stats: output pointer is NULL");
    EngineStats s = e.stats();
    *out = {s.compiles,    s.compile_failures, s.memory_hits,   s.cache_hits,
            s.bundle_hits, s.module_loads,     s.compile_waits, s.store_failures};
    return Status::Ok();
  });
}

}  // extern "C"
