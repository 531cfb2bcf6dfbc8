// ModelShapeFromJson: a Hugging Face config.json or a flashjit model manifest -> ModelShape.
#include <flashjit/warmup.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace flashjit {
namespace {

using Json = nlohmann::json;

Result<int64_t> PositiveInt(const Json& j, const char* key, bool required) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return Status::InvalidArgument(fmt::format("model config: '{}' is missing", key));
    return int64_t{0};
  }
  if (!it->is_number_integer() || it->get<int64_t>() <= 0)
    return Status::InvalidArgument(
        fmt::format("model config: '{}' must be a positive integer, got {}", key, it->dump()));
  return it->get<int64_t>();
}

Result<DType> DTypeField(const Json& j, const char* key, DType fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string())
    return Status::InvalidArgument(fmt::format("model config: '{}' must be a string", key));
  const std::string v = it->get<std::string>();
  if (v == "bfloat16" || v == "bf16") return DType::kBF16;
  if (v == "float16" || v == "f16" || v == "half") return DType::kF16;
  if (v == "e4m3" || v == "fp8_e4m3" || v == "float8_e4m3fn") return DType::kF8E4M3;
  if (v == "e5m2" || v == "fp8_e5m2" || v == "float8_e5m2") return DType::kF8E5M2;
  return Status::InvalidArgument(fmt::format(
      "model config: '{}' is \"{}\"; allowed: bfloat16, float16 (and e4m3, e5m2 for kv_dtype)", key,
      v));
}

}  // namespace

Result<ModelShape> ModelShapeFromJson(std::string_view json_text) {
  Json root = Json::parse(json_text, nullptr, false);
  if (root.is_discarded() || !root.is_object())
    return Status::InvalidArgument("model config: not a JSON object");
  const Json& j = root.contains("model") ? root["model"] : root;
  if (!j.is_object()) return Status::InvalidArgument("model config: 'model' must be an object");
  ModelShape m;
  m.name = j.value("name", root.value("name", std::string("model")));
  FLASHJIT_ASSIGN_OR_RETURN(m.hidden_size, PositiveInt(j, "hidden_size", true));
  FLASHJIT_ASSIGN_OR_RETURN(m.intermediate_size, PositiveInt(j, "intermediate_size", true));
  FLASHJIT_ASSIGN_OR_RETURN(m.num_attention_heads, PositiveInt(j, "num_attention_heads", true));
  FLASHJIT_ASSIGN_OR_RETURN(m.num_key_value_heads, PositiveInt(j, "num_key_value_heads", false));
  if (m.num_key_value_heads == 0) m.num_key_value_heads = m.num_attention_heads;
  FLASHJIT_ASSIGN_OR_RETURN(m.head_dim, PositiveInt(j, "head_dim", false));
  if (m.head_dim == 0) m.head_dim = m.hidden_size / m.num_attention_heads;
  FLASHJIT_ASSIGN_OR_RETURN(m.vocab_size, PositiveInt(j, "vocab_size", true));
  FLASHJIT_ASSIGN_OR_RETURN(m.dtype, DTypeField(j, "torch_dtype", DType::kBF16));
  FLASHJIT_ASSIGN_OR_RETURN(m.kv_dtype, DTypeField(j, "kv_dtype", m.dtype));
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    return Status::InvalidArgument(fmt::format(
        "model config: num_attention_heads {} is not a multiple of num_key_value_heads {}",
        m.num_attention_heads, m.num_key_value_heads));
  if (auto rs = j.find("rope_scaling"); rs != j.end() && rs->is_object())
    m.llama31_rope = rs->value("rope_type", rs->value("type", std::string())) == "llama3";
  if (j.contains("page_size")) {
    FLASHJIT_ASSIGN_OR_RETURN(int64_t p, PositiveInt(j, "page_size", true));
    m.page_size = static_cast<int32_t>(p);
  }
  try {
    if (auto b = j.find("batch_sizes"); b != j.end())
      m.batch_sizes = b->get<std::vector<int32_t>>();
    if (auto t = j.find("token_counts"); t != j.end())
      m.token_counts = t->get<std::vector<int64_t>>();
  } catch (const std::exception& e) {
    return Status::InvalidArgument(fmt::format(
        "model config: 'batch_sizes'/'token_counts' must be arrays of integers ({})", e.what()));
  }
  for (int32_t b : m.batch_sizes)
    if (b <= 0) return Status::InvalidArgument("model config: batch_sizes must be positive");
  for (int64_t t : m.token_counts)
    if (t <= 0) return Status::InvalidArgument("model config: token_counts must be positive");
  return m;
}

}  // namespace flashjit
