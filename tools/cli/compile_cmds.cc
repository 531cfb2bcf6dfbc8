// flashjit render | compile | cache build: one spec, or every spec of a manifest.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tools/cli/cli.h"
#include "tools/cli/manifest.h"

namespace flashjit::cli {
namespace {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot read {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<VariantSpec> SpecFromArgs(const Args& args) {
  std::string path = args.Get("spec");
  if (path.empty()) return Status::InvalidArgument("--spec FILE is required (a JSON variant spec)");
  FLASHJIT_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto spec = VariantSpec::FromJson(text);
  if (!spec.ok()) return spec.status().WithContext(path);
  return spec;
}

void PrintInfo(const KernelInfo& k) {
  fmt::print(
      "{}  {}  {}\n  source {}  compile {:.0f} ms  this call {:.1f} ms\n"
      "  registers {}  spills {} B  stack {} B  static smem {} B  cubin {} B\n",
      k.name, k.arch, k.key, k.source, k.compile_ms, k.fetch_ms, k.registers, k.spill_bytes,
      k.stack_bytes, k.static_smem, k.cubin_size);
}

}  // namespace

int Render(const Args& args) {
  auto spec = SpecFromArgs(args);
  if (!spec.ok()) return Fail(spec.status());
  auto engine = MakeEngine(args);
  if (!engine.ok()) return Fail(engine.status());
  auto tu = (*engine)->Render(*spec);
  if (!tu.ok()) return Fail(tu.status());
  fmt::print("{}", *tu);
  return 0;
}

int Compile(const Args& args) {
  auto spec = SpecFromArgs(args);
  if (!spec.ok()) return Fail(spec.status());
  Args a = args;
  if (args.Has("force")) a.options.push_back({"no-cache", ""});
  auto engine = MakeEngine(a);
  if (!engine.ok()) return Fail(engine.status());
  auto info = (*engine)->Build(*spec, args.Get("arch"));
  if (!info.ok()) return Fail(info.status());
  PrintInfo(*info);
  return 0;
}

// Manifest: {"name": "...", "variants": [ {spec}, ... ]}
int CacheBuild(const Args& args) {
  if (args.Has("model")) return CacheBuildModel(args);
  std::string path = args.Get("manifest");
  if (path.empty())
    return Fail(Status::InvalidArgument("--manifest FILE or --model CONFIG.json is required"));
  auto text = ReadFile(path);
  if (!text.ok()) return Fail(text.status());
  auto parsed = ParseManifest(*text, path);
  if (!parsed.ok()) return Fail(parsed.status());
  const std::vector<VariantSpec>& specs = *parsed;
  auto engine = MakeEngine(args);
  if (!engine.ok()) return Fail(engine.status());
  int jobs = 0;
  try {
    jobs =
        std::stoi(args.Get("j", std::to_string(std::max(1u, std::thread::hardware_concurrency()))));
  } catch (...) {
  }
  if (jobs < 1) return Fail(Status::InvalidArgument("-j: expected a positive number of jobs"));
  const std::string arch = args.Get("arch");
  const bool tty = isatty(STDERR_FILENO) && !args.Has("quiet");
  std::atomic<size_t> next{0}, done{0};
  std::atomic<int> compiled{0}, cached{0}, failed{0};
  std::mutex mu;
  auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i; (i = next++) < specs.size();) {
      auto info = (*engine)->Build(specs[i], arch);
      std::lock_guard<std::mutex> lock(mu);
      if (!info.ok()) {
        ++failed;
        fmt::print(stderr, "{}{}: {}\n", tty ? "\r\033[K" : "", specs[i].name(),
                   info.status().ToString());
      } else if (info->source == "compiled") {
        ++compiled;
      } else {
        ++cached;
      }
      size_t d = ++done;
      if (tty) fmt::print(stderr, "\r\033[K[{}/{}] {}", d, specs.size(), specs[i].name());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min<int>(jobs, static_cast<int>(specs.size())); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (tty) fmt::print(stderr, "\r\033[K");
  fmt::print(
      "cache build {}: {} variants, {} compiled, {} already cached, {} failed, {:.1f} s -> {}\n",
      path, specs.size(), compiled.load(), cached.load(), failed.load(), s,
      (*engine)->config().cache_path.empty() ? "(memory)" : (*engine)->config().cache_path);
  return failed ? 1 : 0;
}

}  // namespace flashjit::cli
