// OpFamily: the description of one op family's variant space, its template header and its
// entry points. Each family defines one in src/ops/<family>/<family>_family.cc and registers it
// with FLASHJIT_REGISTER_FAMILY; generic code (parsing, canonical form, names, rendering) does
// the rest.
#pragma once

#include <flashjit/status.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace flashjit::spec {

using Json = nlohmann::json;

enum class FieldKind { kEnum, kInt, kBool, kFloat };

struct Field {
  std::string name;
  FieldKind kind = FieldKind::kEnum;
  std::vector<std::string> choices;  // kEnum: allowed strings
  std::vector<int64_t> int_choices;  // kInt: allowed values; empty means [min, max]
  int64_t min = 0, max = 0;          // kInt range when int_choices is empty
  Json fallback;                     // default; null means the field is required
  std::string tag;                   // prefix in the readable name ("h" -> "h128")
  std::string doc;
};

Field EnumField(std::string name, std::vector<std::string> choices, Json fallback, std::string doc);
Field IntField(std::string name, std::vector<int64_t> choices, Json fallback, std::string tag,
               std::string doc);
Field IntRangeField(std::string name, int64_t min, int64_t max, Json fallback, std::string tag,
                    std::string doc);
Field BoolField(std::string name, bool fallback, std::string tag, std::string doc);
// A compile-time float constant (e.g. a fixed logits cap baked into a variant).
Field FloatField(std::string name, double fallback, std::string tag, std::string doc);

// One `extern "C" __global__` entry point of a rendered translation unit.
struct Entry {
  std::string symbol;         // "flashjit_rmsnorm"
  std::string function;       // device template called with <Variant>: "flashjit::norm::rmsnorm"
  std::string params_type;    // "flashjit::norm::RmsNormParams"
  std::string launch_bounds;  // "Variant::kThreads" or "Variant::kThreads, 2"
};

struct OpFamily {
  std::string op;
  std::string doc;
  std::string header;  // include path under templates/, e.g. "norm/rmsnorm.cuh"
  std::vector<Field> fields;
  std::vector<Entry> entries;
  // Checks across fields on the filled-in spec; may be empty.
  std::function<Status(const Json&)> check;
  // The members of `struct Variant { ... };` for a canonical spec.
  std::function<std::string(const Json&)> variant_body;
};

void RegisterFamily(const OpFamily* family);
// nullptr when unknown.
const OpFamily* FindFamily(std::string_view op);
std::vector<const OpFamily*> AllFamilies();

// Strict parse of a spec object into its canonical JSON (every field, defaults filled).
Result<Json> Canonicalize(const Json& spec);
// Readable name of a canonical spec.
std::string ReadableName(const OpFamily& family, const Json& canonical);

// C++ spelling of a dtype name inside templates ("bf16" -> "__nv_bfloat16").
std::string CxxType(std::string_view dtype);

}  // namespace flashjit::spec

#define FLASHJIT_REGISTER_FAMILY(factory)                                \
  static const bool FLASHJIT_CONCAT(kFamilyRegistered_, __LINE__) = [] { \
    ::flashjit::spec::RegisterFamily(factory());                         \
    return true;                                                         \
  }()
