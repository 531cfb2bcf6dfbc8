// Rendering: deterministic, tiny, and every registered family renders its default spec.
#include <catch2/catch.hpp>
#include <flashjit/spec.h>

#include "src/codegen/embedded_templates.h"
#include "src/codegen/render.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit {
namespace {

TEST_CASE("render: same spec, same bytes", "[render]") {
  auto s = VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"bf16"})");
  REQUIRE(s.ok());
  auto a = codegen::Render(*s), b = codegen::Render(*s);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
  CHECK_THAT(*a, Catch::Contains("#include \"norm/rmsnorm.cuh\""));
  CHECK_THAT(*a, Catch::Contains("using DType = __nv_bfloat16;"));
  CHECK_THAT(*a, Catch::Contains("extern \"C\" __global__"));
  CHECK_THAT(*a, Catch::Contains("__grid_constant__"));
  CHECK(a->size() < 2000);  // the variant glue stays small; logic lives in headers
}

TEST_CASE("render: different specs render differently", "[render]") {
  auto a = VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"bf16"})");
  auto b = VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"f16"})");
  CHECK(*codegen::Render(*a) != *codegen::Render(*b));
}

TEST_CASE("render: templates are embedded and hashed", "[render]") {
  const auto& all = codegen::EmbeddedTemplates();
  REQUIRE(all.size() >= 4);
  CHECK(std::is_sorted(all.begin(), all.end(),
                       [](auto& x, auto& y) { return x.path < y.path; }));
  CHECK(codegen::TemplateSetHash().size() == 64);
  CHECK(codegen::TemplateSetHash() == codegen::TemplateSetHash());
}

}  // namespace
}  // namespace flashjit
