// Uses the installed C++ API: a dry-run engine renders one spec.
#include <flashjit/engine.h>
#include <flashjit/spec.h>

#include <cstdio>

int main() {
  flashjit::EngineOptions o;
  o.read_environment = false;
  o.disable_cache = true;
  o.dry_run = true;
  o.arch = "sm_90a";
  auto engine = flashjit::Engine::Create(o);
  if (!engine.ok()) return std::fprintf(stderr, "%s\n", engine.status().ToString().c_str()), 1;
  auto spec = flashjit::VariantSpec::FromJson(R"({"op": "rmsnorm", "dtype": "bf16"})");
  if (!spec.ok()) return 1;
  auto tu = (*engine)->Render(*spec);
  if (!tu.ok() || tu->find("__global__") == std::string::npos) return 1;
  std::printf("flashjit %s: C++ consumer ok (%s)\n", (*engine)->config().library_version.c_str(),
              spec->name().c_str());
  return 0;
}
