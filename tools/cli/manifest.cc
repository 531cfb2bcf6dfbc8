#include "tools/cli/manifest.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace flashjit::cli {

Result<std::vector<VariantSpec>> ParseManifest(std::string_view text, const std::string& origin) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("variants") || !j["variants"].is_array())
    return Status::InvalidArgument(
        fmt::format("{}: expected a JSON object with a \"variants\" array of specs", origin));
  const auto& variants = j["variants"];
  std::vector<VariantSpec> specs;
  specs.reserve(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    // dump() of a parsed value cannot fail except on invalid UTF-8 in a string: replace those
    // bytes (the spec parser then names the field) instead of throwing.
    std::string one = variants[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto s = VariantSpec::FromJson(one);
    if (!s.ok()) return s.status().WithContext(fmt::format("{}: variants[{}]", origin, i));
    specs.push_back(*s);
  }
  return specs;
}

}  // namespace flashjit::cli
