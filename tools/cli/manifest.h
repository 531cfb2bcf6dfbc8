// Prewarm manifests: {"name": "...", "variants": [ {spec}, ... ]}.
#pragma once

#include <flashjit/spec.h>
#include <flashjit/status.h>

#include <string>
#include <string_view>
#include <vector>

namespace flashjit::cli {

// Parses and validates every variant of a manifest. `origin` names the file in errors, which
// also name the failing variant's index. Never throws, whatever the bytes.
Result<std::vector<VariantSpec>> ParseManifest(std::string_view text, const std::string& origin);

}  // namespace flashjit::cli
