// flashjit cache ls|verify|gc|clear (cache build is in compile_cmds.cc).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/cli/cli.h"
#include "tools/cli/kernel_table.h"

namespace flashjit::cli {

int CacheBuild(const Args& args);

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
      for (auto& k : *rows) j.push_back(KernelJson(k));
      // Bundles come from elsewhere: bytes that are not UTF-8 are replaced, not thrown on.
      fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
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
  if (sub == "prune") {
    auto n = e.PruneCache();
    if (!n.ok()) return Fail(n.status());
    fmt::print("removed {} kernels of other library, template or NVRTC versions from {}\n", *n,
               e.config().cache_path);
    return 0;
  }
  if (sub == "clear") {
    Status s = e.ClearCache();
    if (!s.ok()) return Fail(s);
    fmt::print("cleared {}\n", e.config().cache_path);
    return 0;
  }
  return Fail(Status::InvalidArgument(fmt::format(
      "unknown cache subcommand '{}'; allowed: build, ls, verify, gc, prune, clear", sub)));
}

}  // namespace flashjit::cli
