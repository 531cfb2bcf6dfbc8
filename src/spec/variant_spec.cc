#include <flashjit/spec.h>
#include <fmt/format.h>

#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit {

Result<VariantSpec> SpecFactory::FromJsonValue(const spec::Json& value) {
  FLASHJIT_ASSIGN_OR_RETURN(spec::Json canonical, spec::Canonicalize(value));
  const spec::OpFamily* family = spec::FindFamily(canonical.at("op").get<std::string>());
  VariantSpec s;
  s.op_ = family->op;
  s.canonical_ = canonical.dump();
  s.name_ = spec::ReadableName(*family, canonical);
  return s;
}

Result<VariantSpec> VariantSpec::FromJson(std::string_view json_text) {
  spec::Json value = spec::Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded())
    return Status::InvalidArgument(
        fmt::format("spec: malformed JSON ({} bytes); expected an object like "
                    "{{\"op\": \"rmsnorm\", \"dtype\": \"bf16\"}}",
                    json_text.size()));
  return SpecFactory::FromJsonValue(value);
}

std::vector<SpecOpInfo> ListSpecOps() {
  std::vector<SpecOpInfo> out;
  for (const spec::OpFamily* f : spec::AllFamilies()) {
    SpecOpInfo info{f->op, f->doc, {}};
    for (const spec::Field& field : f->fields) {
      SpecFieldInfo fi;
      fi.name = field.name;
      fi.doc = field.doc;
      fi.default_value = field.fallback.is_null() ? "(required)" : field.fallback.dump();
      switch (field.kind) {
        case spec::FieldKind::kEnum:
          fi.type = "string";
          for (auto& c : field.choices) fi.allowed += (fi.allowed.empty() ? "" : "|") + c;
          break;
        case spec::FieldKind::kInt:
          fi.type = "int";
          if (field.int_choices.empty()) {
            fi.allowed = fmt::format("[{}, {}]", field.min, field.max);
          } else {
            for (auto c : field.int_choices)
              fi.allowed += fmt::format("{}{}", fi.allowed.empty() ? "" : "|", c);
          }
          break;
        case spec::FieldKind::kBool:
          fi.type = "bool";
          fi.allowed = "true|false";
          break;
        case spec::FieldKind::kFloat:
          fi.type = "number";
          fi.allowed = "finite";
          break;
      }
      info.fields.push_back(fi);
    }
    out.push_back(info);
  }
  return out;
}

}  // namespace flashjit
