#include "src/codegen/render.h"

#include <fmt/format.h>

#include "src/spec/family.h"

namespace flashjit::codegen {

Result<std::string> Render(const VariantSpec& spec) {
  const spec::OpFamily* family = spec::FindFamily(spec.op());
  if (!family) return Status::InvalidArgument(fmt::format("render: unknown op '{}'", spec.op()));
  const spec::Json canonical = spec::Json::parse(spec.canonical_json());

  std::string tu;
  tu += fmt::format("// flashjit variant {}\n// spec {}\n", spec.name(), spec.canonical_json());
  tu += fmt::format("#include \"{}\"\n\n", family->header);
  tu += "struct Variant {\n";
  tu += family->variant_body(canonical);
  tu += "};\n";
  for (const spec::Entry& e : family->entries) {
    tu += fmt::format(
        "\nextern \"C\" __global__ void __launch_bounds__({}) {}(const __grid_constant__ {} "
        "params) {{\n  {}<Variant>(params);\n}}\n",
        e.launch_bounds, e.symbol, e.params_type, e.function);
  }
  return tu;
}

}  // namespace flashjit::codegen
