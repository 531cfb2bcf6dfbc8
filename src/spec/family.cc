#include "src/spec/family.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace flashjit::spec {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, const OpFamily*, std::less<>> families;
};

Registry& GetRegistry() {
  static Registry* r = new Registry();  // never destroyed: used from static initialisers
  return *r;
}

std::string JoinQuoted(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}\"{}\"", i ? ", " : "", v[i]);
  return s;
}

std::string JoinInts(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", v[i]);
  return s;
}

std::string AllowedText(const Field& f) {
  switch (f.kind) {
    case FieldKind::kEnum:
      return "one of " + JoinQuoted(f.choices);
    case FieldKind::kInt:
      if (!f.int_choices.empty()) return "one of " + JoinInts(f.int_choices);
      return fmt::format("an integer in [{}, {}]", f.min, f.max);
    case FieldKind::kBool:
      return "true or false";
    case FieldKind::kFloat:
      return "a finite number";
  }
  return "";
}

Status CheckField(const std::string& op, const Field& f, const Json& v) {
  auto bad = [&](std::string_view what) {
    return Status::InvalidArgument(fmt::format("spec field '{}' of op '{}': {} {}; allowed: {}",
                                               f.name, op, what, v.dump(), AllowedText(f)));
  };
  switch (f.kind) {
    case FieldKind::kEnum:
      if (!v.is_string()) return bad("expected a string, got");
      if (std::find(f.choices.begin(), f.choices.end(), v.get<std::string>()) == f.choices.end())
        return bad("unsupported value");
      return Status::Ok();
    case FieldKind::kInt: {
      if (!v.is_number_integer()) return bad("expected an integer, got");
      int64_t x = v.get<int64_t>();
      bool okv = f.int_choices.empty() ? (x >= f.min && x <= f.max)
                                       : std::find(f.int_choices.begin(), f.int_choices.end(), x) !=
                                             f.int_choices.end();
      if (!okv) return bad("unsupported value");
      return Status::Ok();
    }
    case FieldKind::kBool:
      if (!v.is_boolean()) return bad("expected true or false, got");
      return Status::Ok();
    case FieldKind::kFloat:
      if (!v.is_number() || !std::isfinite(v.get<double>())) return bad("expected a number, got");
      return Status::Ok();
  }
  return Status::Internal("unknown field kind");
}

}  // namespace

Field EnumField(std::string name, std::vector<std::string> choices, Json fallback,
                std::string doc) {
  Field f;
  f.name = std::move(name);
  f.kind = FieldKind::kEnum;
  f.choices = std::move(choices);
  f.fallback = std::move(fallback);
  f.doc = std::move(doc);
  return f;
}

Field IntField(std::string name, std::vector<int64_t> choices, Json fallback, std::string tag,
               std::string doc) {
  Field f;
  f.name = std::move(name);
  f.kind = FieldKind::kInt;
  f.int_choices = std::move(choices);
  f.fallback = std::move(fallback);
  f.tag = std::move(tag);
  f.doc = std::move(doc);
  return f;
}

Field IntRangeField(std::string name, int64_t min, int64_t max, Json fallback, std::string tag,
                    std::string doc) {
  Field f = IntField(std::move(name), {}, std::move(fallback), std::move(tag), std::move(doc));
  f.min = min;
  f.max = max;
  return f;
}

Field BoolField(std::string name, bool fallback, std::string tag, std::string doc) {
  Field f;
  f.name = std::move(name);
  f.kind = FieldKind::kBool;
  f.fallback = fallback;
  f.tag = std::move(tag);
  f.doc = std::move(doc);
  return f;
}

Field FloatField(std::string name, double fallback, std::string tag, std::string doc) {
  Field f;
  f.name = std::move(name);
  f.kind = FieldKind::kFloat;
  f.fallback = fallback;
  f.tag = std::move(tag);
  f.doc = std::move(doc);
  return f;
}

void RegisterFamily(const OpFamily* family) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.families[family->op] = family;
}

const OpFamily* FindFamily(std::string_view op) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.families.find(op);
  return it == r.families.end() ? nullptr : it->second;
}

std::vector<const OpFamily*> AllFamilies() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const OpFamily*> out;
  for (auto& [name, f] : r.families) out.push_back(f);
  return out;
}

Result<Json> Canonicalize(const Json& spec) {
  if (!spec.is_object())
    return Status::InvalidArgument(
        fmt::format("spec: expected a JSON object, got {}", spec.type_name()));
  auto op_it = spec.find("op");
  std::string known;
  for (const OpFamily* f : AllFamilies()) known += (known.empty() ? "\"" : ", \"") + f->op + "\"";
  if (op_it == spec.end() || !op_it->is_string())
    return Status::InvalidArgument("spec field 'op': missing or not a string; allowed: " + known);
  const std::string op = op_it->get<std::string>();
  const OpFamily* family = FindFamily(op);
  if (!family)
    return Status::InvalidArgument(
        fmt::format("spec field 'op': unknown op \"{}\"; allowed: {}", op, known));

  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (it.key() == "op") continue;
    bool found = std::any_of(family->fields.begin(), family->fields.end(),
                             [&](const Field& f) { return f.name == it.key(); });
    if (!found) {
      std::vector<std::string> names;
      for (const Field& f : family->fields) names.push_back(f.name);
      return Status::InvalidArgument(fmt::format("spec: unknown field '{}' for op '{}'; fields: {}",
                                                 it.key(), op, JoinQuoted(names)));
    }
  }

  Json out = Json::object();
  out["op"] = op;
  for (const Field& f : family->fields) {
    auto it = spec.find(f.name);
    if (it == spec.end()) {
      if (f.fallback.is_null())
        return Status::InvalidArgument(fmt::format(
            "spec field '{}' of op '{}': required; allowed: {}", f.name, op, AllowedText(f)));
      out[f.name] = f.fallback;
      continue;
    }
    FLASHJIT_RETURN_IF_ERROR(CheckField(op, f, *it));
    // Normalise numbers so 1.0 and 1 give one canonical text.
    out[f.name] = f.kind == FieldKind::kFloat ? Json(it->get<double>()) : *it;
  }
  if (family->check) FLASHJIT_RETURN_IF_ERROR(family->check(out));
  return out;
}

std::string ReadableName(const OpFamily& family, const Json& canonical) {
  std::string name = family.op;
  for (const Field& f : family.fields) {
    const Json& v = canonical.at(f.name);
    switch (f.kind) {
      case FieldKind::kEnum:
        name += '_';
        name += v.get<std::string>();
        break;
      case FieldKind::kInt:
        name += fmt::format("_{}{}", f.tag, v.get<int64_t>());
        break;
      case FieldKind::kBool:
        if (v.get<bool>()) name += "_" + (f.tag.empty() ? f.name : f.tag);
        break;
      case FieldKind::kFloat:
        name += fmt::format("_{}{:g}", f.tag, v.get<double>());
        break;
    }
  }
  return name;
}

std::string CxxType(std::string_view dtype) {
  if (dtype == "f16") return "half";
  if (dtype == "bf16") return "__nv_bfloat16";
  if (dtype == "f32") return "float";
  if (dtype == "e4m3") return "__nv_fp8_e4m3";
  if (dtype == "e5m2") return "__nv_fp8_e5m2";
  if (dtype == "i32") return "int32_t";
  if (dtype == "i64") return "int64_t";
  if (dtype == "u8") return "uint8_t";
  return "void";
}

}  // namespace flashjit::spec
