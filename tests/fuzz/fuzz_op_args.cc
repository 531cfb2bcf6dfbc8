// Fuzzes the argument validation of the public op entry points (fuzz_op_cases.cc lists them).
// The engine is a dry run with JIT disabled and no cache: valid arguments end in a clean
// NotFound (no kernel) and nothing is launched, so every input is safe to try. Any status is
// fine; a crash, a sanitizer report or an error without a message is a finding.
#include <flashjit/engine.h>

#include <cstdlib>

#include "tests/fuzz/fuzz_op_cases.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::shared_ptr<flashjit::Engine> engine = [] {
    flashjit::EngineOptions o;
    o.read_environment = false;
    o.disable_cache = true;
    o.arch = "sm_90a";
    o.dry_run = true;
    o.disable_jit = true;
    auto e = flashjit::Engine::Create(o);
    if (!e.ok()) std::abort();
    return *e;
  }();
  FuzzedDataProvider in(data, size);
  const auto& cases = flashjit::fuzz::OpCases();
  const auto& c = cases[in.ConsumeIntegralInRange<size_t>(0, cases.size() - 1)];
  flashjit::Status s = c.run(*engine, in);
  if (!s.ok() && s.message().empty()) std::abort();
  return 0;
}
