// The cache key: SHA-256 over every input that can change the compiled binary.
#pragma once

#include <flashjit/spec.h>

#include <string>
#include <vector>

namespace flashjit::cache {

struct KeyInputs {
  std::string lib_version;
  std::string template_hash;
  std::string nvrtc_version;
  std::string arch;
  std::vector<std::string> options;  // normalised: sorted, no host paths
  std::string canonical_spec;
};

// The exact text that is hashed (canonical JSON of the inputs); shown by `flashjit compile -v`.
std::string KeyMaterial(const KeyInputs& inputs);
// Hex SHA-256 of KeyMaterial.
std::string CacheKey(const KeyInputs& inputs);

// Inputs for `spec` on `arch` with this build's versions and options.
KeyInputs CurrentKeyInputs(const VariantSpec& spec, const std::string& arch);

}  // namespace flashjit::cache
