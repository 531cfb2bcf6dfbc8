// GPU test runner: exits 77 (ctest's skip) when no GPU is visible, unless FLASHJIT_DRY_RUN=1
// (prewarm mode). With FLASHJIT_EXPECT_NO_COMPILE=1 it fails if any kernel was compiled here:
// the device run must use only what the CPU machine prewarmed.
#define CATCH_CONFIG_RUNNER
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "src/runtime/driver.h"
#include "tests/gpu/gpu_test_util.h"

int main(int argc, char** argv) {
  using namespace flashjit;
  if (!test::DryRun()) {
    auto n = runtime::DeviceCount();
    if (!n.ok() || *n == 0) {
      fmt::print("no GPU visible ({}): skipping the GPU tests\n",
                 n.ok() ? "0 devices" : n.status().message());
      return 77;
    }
  }
  test::Seed();
  int rc = Catch::Session().run(argc, argv);
  EngineStats s = test::TestEngine().stats();
  fmt::print(
      "engine: {} compiles, {} cache hits, {} bundle hits, {} module loads, {} memory hits\n",
      s.compiles, s.cache_hits, s.bundle_hits, s.module_loads, s.memory_hits);
  const char* expect = std::getenv("FLASHJIT_EXPECT_NO_COMPILE");
  if (expect && std::string(expect) == "1" && (s.compiles != 0 || s.compile_failures != 0)) {
    fmt::print("FAILED: {} NVRTC compiles on the device run; the prewarmed cache missed them\n",
               s.compiles + s.compile_failures);
    return 1;
  }
  return rc;
}
