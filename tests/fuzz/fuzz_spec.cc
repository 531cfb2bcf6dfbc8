// Fuzzes the spec JSON parser: any bytes give a spec or an error, never a crash; a parsed spec's
// canonical form parses back to the same spec (canonicalisation is idempotent).
#include <flashjit/spec.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = flashjit::VariantSpec::FromJson(text);
  if (!spec.ok()) {
    if (spec.status().message().empty()) std::abort();  // every error says what was wrong
    return 0;
  }
  auto again = flashjit::VariantSpec::FromJson(spec->canonical_json());
  if (!again.ok() || !(*again == *spec) || again->name() != spec->name()) std::abort();
  return 0;
}
