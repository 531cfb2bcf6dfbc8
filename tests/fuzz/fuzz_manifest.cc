// Fuzzes the prewarm manifest parser behind `flashjit cache build --manifest`.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tools/cli/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto specs = flashjit::cli::ParseManifest(text, "fuzz.json");
  if (!specs.ok() && specs.status().message().empty()) std::abort();
  if (specs.ok())
    for (const auto& s : *specs)
      if (s.canonical_json().empty() || s.op().empty()) std::abort();
  return 0;
}
