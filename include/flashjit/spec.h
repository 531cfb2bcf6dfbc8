// VariantSpec: what to build. One kernel variant = one op plus its compile-time knobs.
//
// JSON form: a flat object, {"op": "rmsnorm", "dtype": "bf16", ...}. Parsing is strict: an unknown
// op or field, a wrong type or an unsupported value is an InvalidArgument that names the field,
// the value and the allowed values. Fields left out take their documented defaults; the canonical
// form has every field, sorted keys and no whitespace, so equal variants have equal text.
#pragma once

#include <flashjit/export.h>
#include <flashjit/status.h>

#include <string>
#include <string_view>
#include <vector>

namespace flashjit {

class FLASHJIT_API VariantSpec {
 public:
  // Parses and validates one spec.
  static Result<VariantSpec> FromJson(std::string_view json_text);

  const std::string& op() const { return op_; }
  // Sorted keys, no whitespace, defaults filled in.
  const std::string& canonical_json() const { return canonical_; }
  // Readable name for logs and the CLI, e.g. "rmsnorm_bf16_t256_v8". Not unique by itself:
  // the cache key is the hash.
  const std::string& name() const { return name_; }

  bool operator==(const VariantSpec& o) const { return canonical_ == o.canonical_; }

 private:
  friend class SpecFactory;
  std::string op_, canonical_, name_;
};

// Describes the ops and fields this build knows, for the CLI and docs.
struct FLASHJIT_API SpecFieldInfo {
  std::string name, type, default_value, allowed, doc;
};
struct FLASHJIT_API SpecOpInfo {
  std::string op, doc;
  std::vector<SpecFieldInfo> fields;
};
FLASHJIT_API std::vector<SpecOpInfo> ListSpecOps();

}  // namespace flashjit
