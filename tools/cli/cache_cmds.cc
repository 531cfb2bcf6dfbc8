// flashjit cache ls|verify|gc|clear|build and bundle export|import|inspect.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/cli/cli.h"

namespace flashjit::cli {

int CacheBuild(const Args& args);

namespace {

nlohmann::json ToJson(const CachedKernel& k) {
  return {{"key", k.key},
          {"name", k.name},
          {"op", k.op},
          {"arch", k.arch},
          {"current", k.current},
          {"cubin_size", k.cubin_size},
          {"compile_ms", k.compile_ms},
          {"registers", k.registers},
          {"spill_bytes", k.spill_bytes},
          {"static_smem", k.static_smem},
          {"use_count", k.use_count},
          {"spec", k.spec}};
}

void PrintKernels(const std::vector<CachedKernel>& rows) {
  fmt::print("{:<16} {:<7} {:>8} {:>5} {:>6} {:>5}  {}\n", "key", "arch", "bytes", "regs", "ms",
             "uses", "name");
  for (const auto& k : rows)
    fmt::print("{:<16} {:<7} {:>8} {:>5} {:>6.0f} {:>5}  {}{}\n", k.key.substr(0, 16), k.arch,
               k.cubin_size, k.registers, k.compile_ms, k.use_count, k.name,
               k.current ? "" : "  (stale: other library/templates/NVRTC)");
}

}  // namespace

int CacheCommand(const std::string& sub, const Args& args) {
  if (sub == "build") return CacheBuild(args);
  auto engine = MakeEngine(args);
  if (!engine.ok()) return Fail(engine.status());
  Engine& e = **engine;
  if (sub == "ls") {
    auto rows = e.ListCache();
    if (!rows.ok()) return Fail(rows.status());
    if (args.Has("json")) {
      nlohmann::json j = nlohmann::json::array();
      for (auto& k : *rows) j.push_back(ToJson(k));
      fmt::print("{}\n", j.dump(2));
    } else {
      PrintKernels(*rows);
      fmt::print("{} kernels in {}\n", rows->size(), e.config().cache_path);
    }
    return 0;
  }
  if (sub == "verify") {
    auto r = e.VerifyCache(args.Has("repair"));
    if (!r.ok()) return Fail(r.status());
    fmt::print("{}: {} rows, {} corrupt{}, database integrity: {}\n", e.config().cache_path,
               r->rows, r->bad_rows, r->removed ? fmt::format(" ({} removed)", r->removed) : "",
               r->integrity_message);
    for (auto& p : r->problems) fmt::print("  {}\n", p);
    return r->bad_rows == r->removed && r->integrity_ok ? 0 : 1;
  }
  if (sub == "gc") {
    std::string v = args.Get("max-bytes");
    int64_t max_bytes = -1;
    try {
      max_bytes = std::stoll(v);
    } catch (...) {
    }
    if (max_bytes < 0)
      return Fail(Status::InvalidArgument("--max-bytes N: expected a byte count >= 0"));
    auto n = e.GarbageCollectCache(max_bytes);
    if (!n.ok()) return Fail(n.status());
    fmt::print("evicted {} kernels\n", *n);
    return 0;
  }
  if (sub == "clear") {
    Status s = e.ClearCache();
    if (!s.ok()) return Fail(s);
    fmt::print("cleared {}\n", e.config().cache_path);
    return 0;
  }
  return Fail(Status::InvalidArgument(
      fmt::format("unknown cache subcommand '{}'; allowed: build, ls, verify, gc, clear", sub)));
}

int BundleCommand(const std::string& sub, const Args& args) {
  if (sub == "inspect") {
    if (args.positional.empty())
      return Fail(Status::InvalidArgument("bundle inspect FILE: FILE missing"));
    auto info = InspectBundle(args.positional[0]);
    if (!info.ok()) return Fail(info.status());
    if (args.Has("json")) {
      nlohmann::json j = {{"path", info->path},
                          {"format", info->format},
                          {"lib_version", info->lib_version},
                          {"template_hash", info->template_hash},
                          {"nvrtc_version", info->nvrtc_version},
                          {"arch", info->arch},
                          {"count", info->count},
                          {"content_hash", info->content_hash},
                          {"ok", info->check.ok()},
                          {"check", info->check.ToString()}};
      for (auto& k : info->kernels) j["kernels"].push_back(ToJson(k));
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print(
          "bundle {}\n  format {}  flashjit {}  NVRTC {}  arch {}\n  templates {}\n"
          "  {} kernels, content {}\n  check: {}\n",
          info->path, info->format, info->lib_version, info->nvrtc_version, info->arch,
          info->template_hash, info->count, info->content_hash, info->check.ToString());
      PrintKernels(info->kernels);
    }
    return info->check.ok() ? 0 : 1;
  }
  auto engine = MakeEngine(args);
  if (!engine.ok()) return Fail(engine.status());
  if (sub == "export") {
    std::string arch = args.Get("arch"), out = args.Get("out");
    if (arch.empty() || out.empty())
      return Fail(Status::InvalidArgument("bundle export needs --arch A and --out FILE"));
    auto info = (*engine)->ExportBundle(arch, out);
    if (!info.ok()) return Fail(info.status());
    fmt::print("wrote {}: {} kernels for {}, content {}\n", out, info->count, arch,
               info->content_hash);
    return 0;
  }
  if (sub == "import") {
    if (args.positional.empty())
      return Fail(Status::InvalidArgument("bundle import FILE: FILE missing"));
    auto n = (*engine)->ImportBundle(args.positional[0], args.Get("arch"));
    if (!n.ok()) return Fail(n.status());
    fmt::print("imported {} new kernels into {}\n", *n, (*engine)->config().cache_path);
    return 0;
  }
  return Fail(Status::InvalidArgument(
      fmt::format("unknown bundle subcommand '{}'; allowed: export, import, inspect", sub)));
}

}  // namespace flashjit::cli
