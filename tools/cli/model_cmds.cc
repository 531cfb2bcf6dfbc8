// flashjit cache build --model FILE: prewarm every kernel one decode step of a model launches,
// by running the model's op calls on a dry-run engine (no GPU needed).
#include <flashjit/warmup.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "tools/cli/cli.h"

namespace flashjit::cli {

int CacheBuildModel(const Args& args) {
  const std::string path = args.Get("model");
  std::ifstream in(path);
  if (!in) return Fail(Status::NotFound(fmt::format("cannot read model config {}", path)));
  std::stringstream ss;
  ss << in.rdbuf();
  auto model = ModelShapeFromJson(ss.str());
  if (!model.ok()) return Fail(model.status().WithContext(path));
  EngineOptions o;
  o.cache_dir = args.Get("cache-dir");
  o.arch = args.Get("arch");
  o.dry_run = true;
  auto engine = Engine::Create(o);
  if (!engine.ok()) return Fail(engine.status());
  auto t0 = std::chrono::steady_clock::now();
  Status s = WarmupModel(**engine, *model);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) return Fail(s);
  EngineStats st = (*engine)->stats();
  fmt::print("cache build {} ({}): {} variants, {} compiled, {} already cached, {:.1f} s -> {}\n",
             path, model->name, st.module_loads, st.compiles, st.cache_hits + st.bundle_hits, secs,
             (*engine)->config().cache_path.empty() ? "(memory)" : (*engine)->config().cache_path);
  return 0;
}

}  // namespace flashjit::cli
