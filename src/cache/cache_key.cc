#include "src/cache/cache_key.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "build_info.h"
#include "src/codegen/embedded_templates.h"
#include "src/common/sha256.h"
#include "src/compile/compiler.h"

namespace flashjit::cache {

std::string KeyMaterial(const KeyInputs& in) {
  std::vector<std::string> options = in.options;
  std::sort(options.begin(), options.end());
  options.erase(std::unique(options.begin(), options.end()), options.end());
  nlohmann::json j = {
      {"arch", in.arch},    {"lib", in.lib_version},     {"nvrtc", in.nvrtc_version},
      {"options", options}, {"spec", in.canonical_spec}, {"templates", in.template_hash},
  };
  return j.dump();
}

std::string CacheKey(const KeyInputs& inputs) { return Sha256Hex(KeyMaterial(inputs)); }

KeyInputs CurrentKeyInputs(const VariantSpec& spec, const std::string& arch) {
  KeyInputs in;
  in.lib_version = FLASHJIT_VERSION_STRING;
  in.template_hash = codegen::TemplateSetHash();
  in.nvrtc_version = compile::NvrtcVersion();
  in.arch = arch;
  in.options = compile::KeyedOptions();
  in.canonical_spec = spec.canonical_json();
  return in;
}

}  // namespace flashjit::cache
