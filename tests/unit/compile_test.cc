// NVRTC: every family's example variant and every template header compile for sm_90 and
// sm_90a; failures carry the log and the key; archs are validated.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "src/codegen/embedded_templates.h"
#include "src/codegen/render.h"
#include "src/compile/compiler.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit {
namespace {

std::string IncludeDir() {
  auto dir = compile::FindCudaIncludeDir("");
  REQUIRE(dir.ok());
  return *dir;
}

// The first allowed value of every field: a valid spec for families without cross-checks.
spec::Json ExampleSpec(const spec::OpFamily& f) {
  spec::Json j = {{"op", f.op}};
  for (const spec::Field& field : f.fields) {
    if (!field.fallback.is_null()) continue;
    switch (field.kind) {
      case spec::FieldKind::kEnum:
        j[field.name] = field.choices.front();
        break;
      case spec::FieldKind::kInt:
        j[field.name] = field.int_choices.empty() ? field.min : field.int_choices.front();
        break;
      case spec::FieldKind::kBool:
        j[field.name] = false;
        break;
      case spec::FieldKind::kFloat:
        j[field.name] = 1.0;
        break;
    }
  }
  return j;
}

TEST_CASE("compile: every family's example variant compiles for sm_90 and sm_90a", "[compile]") {
  const std::string inc = IncludeDir();
  for (const spec::OpFamily* f : spec::AllFamilies()) {
    auto spec = SpecFactory::FromJsonValue(ExampleSpec(*f));
    INFO(f->op << ": " << spec.status().ToString());
    REQUIRE(spec.ok());
    auto tu = codegen::Render(*spec);
    REQUIRE(tu.ok());
    for (const char* arch : {"sm_90", "sm_90a"}) {
      auto r = compile::Compile({*tu, spec->name(), arch, "test-key"}, inc);
      INFO(arch << " " << r.status().ToString());
      REQUIRE(r.ok());
      CHECK(r->cubin.size() > 1000);
      CHECK(r->registers > 0);
      CHECK(r->spill_bytes >= 0);  // reported; spills are a performance finding, not an error
      if (r->spill_bytes > 0)
        WARN(spec->name() << " spills " << r->spill_bytes << " bytes on " << arch);
      CHECK(r->compile_ms > 0);
    }
  }
}

TEST_CASE("compile: every template header compiles on its own", "[compile]") {
  const std::string inc = IncludeDir();
  for (const auto& t : codegen::EmbeddedTemplates()) {
    std::string tu = fmt::format("#include \"{}\"\n", t.path);
    auto r = compile::Compile({tu, "header_check", "sm_90a", "header"}, inc);
    INFO(t.path << ": " << r.status().ToString());
    CHECK(r.ok());
  }
}

TEST_CASE("compile: a failure carries the full NVRTC log and the key", "[compile]") {
  auto r = compile::Compile({"extern \"C\" __global__ void k() { undefined_symbol(); }", "broken",
                             "sm_90a", "deadbeefkey"},
                            IncludeDir());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCompileError);
  CHECK_THAT(r.status().message(), Catch::Contains("deadbeefkey") &&
                                       Catch::Contains("undefined_symbol") &&
                                       Catch::Contains("broken"));
}

TEST_CASE("compile: unsupported archs are refused with the allowed list", "[compile]") {
  for (const char* bad : {"sm_91", "sm_75", "compute_90", "", "sm_90b"}) {
    Status s = compile::ValidateArch(bad);
    INFO(bad);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("sm_90a"));
  }
  CHECK(compile::ValidateArch("sm_90").ok());
  CHECK(compile::ValidateArch("sm_90a").ok());
  CHECK(compile::NvrtcVersion().find('.') != std::string::npos);
}

TEST_CASE("compile: a missing CUDA include dir is a clear NotFound", "[compile]") {
  auto r = compile::FindCudaIncludeDir("/nonexistent/cuda/include");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK_THAT(r.status().message(),
             Catch::Contains("/nonexistent/cuda/include") && Catch::Contains("CUDA_HOME"));
}

TEST_CASE("compile: ptxas resource report is parsed", "[compile]") {
  compile::CompileResult r;
  compile::ParsePtxasReport(
      "ptxas info    : Used 40 registers, used 1 barriers, 128 bytes smem\n"
      "ptxas info    : Function properties for k\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n",
      &r);
  CHECK(r.registers == 40);
  CHECK(r.static_smem_bytes == 128);
  CHECK(r.stack_bytes == 16);
  CHECK(r.spill_bytes == 12);
}

TEST_CASE("compile: ptxas's report gives each entry's own resources", "[compile]") {
  compile::CompileResult r;
  compile::ParsePtxasReport(
      "ptxas info    : Compiling entry function 'big' for 'sm_90a'\n"
      "ptxas info    : Function properties for big\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 162 registers, used 1 barriers, 128 bytes smem\n"
      "ptxas info    : Compiling entry function 'small' for 'sm_90a'\n"
      "ptxas info    : Used 56 registers, used 1 barriers\n",
      &r);
  CHECK(r.registers == 162);
  REQUIRE(r.entries.size() == 2);
  REQUIRE(r.entry("big") != nullptr);
  CHECK(r.entry("big")->registers == 162);
  CHECK(r.entry("big")->static_smem_bytes == 128);
  REQUIRE(r.entry("small") != nullptr);
  CHECK(r.entry("small")->registers == 56);
  CHECK(r.entry("small")->static_smem_bytes == 0);
  CHECK(r.entry("absent") == nullptr);
}

}  // namespace
}  // namespace flashjit
