// flashjit show-config: what this build is and what it sees. Works with no GPU and no nvcc.
#include <flashjit/device.h>
#include <flashjit/spec.h>
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tools/cli/cli.h"

namespace flashjit::cli {

int ShowConfig(const Args& args) {
  auto engine = MakeEngine(args);
  if (!engine.ok()) return Fail(engine.status());
  const EngineConfig& c = (*engine)->config();
  nlohmann::json j;
  j["library_version"] = c.library_version;
  j["template_hash"] = c.template_hash;
  j["nvrtc_version"] = c.nvrtc_version;
  j["cuda_include_dir"] = c.cuda_include_dir.empty() ? "(not found)" : c.cuda_include_dir;
  j["arch"] = c.arch.empty() ? "(each device's own)" : c.arch;
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
                      {"memory_gib", g.total_mem / double(1 << 30)}});
  }
  j["gpus"] = gpus;
  j["cache_path"] = c.cache_path.empty() ? "(in memory)" : c.cache_path;
  j["cache_writable"] = c.cache_writable;
  if (!c.cache_warning.empty()) j["cache_warning"] = c.cache_warning;
  std::error_code ec;
  j["cache_bytes"] = c.cache_path.empty() ? 0 : std::filesystem::file_size(c.cache_path, ec);
  if (auto rows = (*engine)->ListCache(); rows.ok()) j["cache_kernels"] = rows->size();
  j["bundles"] = c.bundles;
  j["jit_disabled"] = c.disable_jit;
  nlohmann::json ops = nlohmann::json::array();
  for (const SpecOpInfo& op : ListSpecOps()) ops.push_back(op.op);
  j["ops"] = ops;
  if (args.Has("json")) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string v = it->is_string() ? it->get<std::string>() : it->dump();
    fmt::print("{:<18} {}\n", it.key(), v);
  }
  return 0;
}

int SpecOps(const Args& args) {
  auto ops = ListSpecOps();
  if (args.Has("json")) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& op : ops) {
      nlohmann::json fields = nlohmann::json::array();
      for (const auto& f : op.fields)
        fields.push_back({{"name", f.name},
                          {"type", f.type},
                          {"default", f.default_value},
                          {"allowed", f.allowed},
                          {"doc", f.doc}});
      j.push_back({{"op", op.op}, {"doc", op.doc}, {"fields", fields}});
    }
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  for (const auto& op : ops) {
    fmt::print("{}: {}\n", op.op, op.doc);
    for (const auto& f : op.fields)
      fmt::print("  {:<14} {:<7} default {:<12} allowed {}  {}\n", f.name, f.type, f.default_value,
                 f.allowed, f.doc);
  }
  return 0;
}

}  // namespace flashjit::cli
