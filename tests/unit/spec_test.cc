// VariantSpec: strict parsing, every error path, canonical form, readable names.
#include <catch2/catch.hpp>
#include <flashjit/spec.h>

namespace flashjit {
namespace {

Status ParseError(const std::string& json) {
  auto s = VariantSpec::FromJson(json);
  REQUIRE_FALSE(s.ok());
  return s.status();
}

TEST_CASE("spec: a minimal spec is filled with defaults in canonical form", "[spec]") {
  auto s = VariantSpec::FromJson(R"({"op": "rmsnorm", "dtype": "bf16"})");
  REQUIRE(s.ok());
  CHECK(s->op() == "rmsnorm");
  CHECK(s->canonical_json() ==
        R"({"dtype":"bf16","gemma":false,"items":4,"op":"rmsnorm","threads":256,"vec":8})");
  CHECK(s->name() == "rmsnorm_bf16_v8_t256_i4");
}

TEST_CASE("spec: field order and whitespace do not change the canonical form", "[spec]") {
  auto a = VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"f16","vec":4,"gemma":true})");
  auto b = VariantSpec::FromJson("{ \"gemma\" : true,\n \"vec\": 4, \"dtype\": \"f16\", \"op\": \"rmsnorm\" }");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->canonical_json() == b->canonical_json());
  CHECK(*a == *b);
  CHECK(a->name() == "rmsnorm_f16_v4_t256_i4_gemma");
}

TEST_CASE("spec: every error names the field, the value and what is allowed", "[spec]") {
  Status s = ParseError(R"({"op": "rmsnorm", "dtype": "bf16", "vec": 3})");
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("'vec'") && Catch::Contains("3") &&
                              Catch::Contains("1, 2, 4, 8"));

  s = ParseError(R"({"op": "rmsnorm", "dtype": "f64"})");
  CHECK_THAT(s.message(), Catch::Contains("'dtype'") && Catch::Contains("\"f64\"") &&
                              Catch::Contains("\"f16\", \"bf16\""));

  s = ParseError(R"({"op": "rmsnorm", "dtype": "bf16", "colour": 1})");
  CHECK_THAT(s.message(), Catch::Contains("unknown field 'colour'") && Catch::Contains("\"vec\""));

  s = ParseError(R"({"op": "nosuchop"})");
  CHECK_THAT(s.message(), Catch::Contains("unknown op \"nosuchop\"") && Catch::Contains("\"rmsnorm\""));

  s = ParseError(R"({"dtype": "bf16"})");
  CHECK_THAT(s.message(), Catch::Contains("'op'"));

  s = ParseError(R"({"op": "rmsnorm"})");
  CHECK_THAT(s.message(), Catch::Contains("'dtype'") && Catch::Contains("required"));

  s = ParseError(R"({"op": "rmsnorm", "dtype": "bf16", "threads": "256"})");
  CHECK_THAT(s.message(), Catch::Contains("expected an integer"));

  s = ParseError(R"({"op": "rmsnorm", "dtype": "bf16", "gemma": 1})");
  CHECK_THAT(s.message(), Catch::Contains("expected true or false"));

  s = ParseError(R"({"op": "rmsnorm", "dtype": "bf16", "items": 17})");
  CHECK_THAT(s.message(), Catch::Contains("[0, 16]"));

  s = ParseError(R"({"op": "rmsnorm", "dtype": "bf16")");
  CHECK_THAT(s.message(), Catch::Contains("malformed JSON"));

  s = ParseError(R"([1, 2])");
  CHECK_THAT(s.message(), Catch::Contains("expected a JSON object"));

  s = ParseError("");
  CHECK(s.code() == StatusCode::kInvalidArgument);
}

TEST_CASE("spec: ListSpecOps describes every registered op", "[spec]") {
  auto ops = ListSpecOps();
  auto it = std::find_if(ops.begin(), ops.end(), [](auto& o) { return o.op == "rmsnorm"; });
  REQUIRE(it != ops.end());
  CHECK(it->fields.size() == 5);
  CHECK(it->fields[0].default_value == "(required)");
}

}  // namespace
}  // namespace flashjit
