// flashjit_demo: the checked demo of the README's main command. On a machine with a GPU it runs
// each op family on fresh random data through the whole path (spec -> cache -> load -> launch)
// and compares with a double-precision CPU reference. With no GPU it says so and exits 0.
#include <fmt/format.h>

#include <cstdio>

#include "src/runtime/driver.h"
#include "tools/demo/demo_cases.h"

int main() {
  using namespace flashjit;
  auto n = runtime::DeviceCount();
  if (!n.ok() || *n == 0) {
    fmt::print("flashjit_demo: no GPU here ({}); the CPU-side path (spec, render, NVRTC, cache) "
               "was exercised by `flashjit cache build` above\n",
               n.ok() ? "0 devices" : n.status().message());
    return 0;
  }
  auto engine = Engine::Create();
  if (!engine.ok()) {
    fmt::print(stderr, "flashjit_demo: {}\n", engine.status().ToString());
    return 1;
  }
  int failures = 0;
  for (const demo::Case& c : demo::AllCases()) {
    demo::Outcome o = c.run(**engine);
    fmt::print("{:<40} {:<6} {}\n", c.name, o.ok ? "PASS" : "FAIL", o.detail);
    failures += !o.ok;
  }
  EngineStats s = (*engine)->stats();
  fmt::print("engine: {} compiles, {} cache hits, {} module loads\n", s.compiles, s.cache_hits,
             s.module_loads);
  return failures ? 1 : 0;
}
