// The cache key: stable when nothing changed, different when any input changed.
#include "src/cache/cache_key.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/codegen/embedded_templates.h"
#include "src/common/sha256.h"

namespace flashjit {
namespace {

TEST_CASE("cache key: stable, and moved by every input", "[cache_key]") {
  auto spec = VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"bf16"})");
  REQUIRE(spec.ok());
  const cache::KeyInputs base = cache::CurrentKeyInputs(*spec, "sm_90a");
  const std::string key = cache::CacheKey(base);
  CHECK(key.size() == 64);
  CHECK(cache::CacheKey(cache::CurrentKeyInputs(*spec, "sm_90a")) == key);

  auto moved = [&](auto mutate) {
    cache::KeyInputs in = base;
    mutate(in);
    return cache::CacheKey(in) != key;
  };
  CHECK(moved([](auto& in) { in.lib_version = "0.1.1"; }));
  CHECK(moved([](auto& in) { in.template_hash[0] ^= 1; }));
  CHECK(moved([](auto& in) { in.nvrtc_version = "13.1"; }));
  CHECK(moved([](auto& in) { in.arch = "sm_90"; }));
  CHECK(moved([](auto& in) { in.options.push_back("-lineinfo"); }));
  CHECK(moved([](auto& in) { in.canonical_spec += " "; }));
  // Options are a set: order and duplicates do not matter.
  cache::KeyInputs reordered = base;
  std::reverse(reordered.options.begin(), reordered.options.end());
  reordered.options.push_back(reordered.options.front());
  CHECK(cache::CacheKey(reordered) == key);
  // No host path is part of the key.
  CHECK(cache::KeyMaterial(base).find("/usr") == std::string::npos);
}

TEST_CASE("cache key: specs that differ in one knob get different keys", "[cache_key]") {
  auto a = VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"bf16"})");
  auto b = VariantSpec::FromJson(R"({"op":"rmsnorm","dtype":"bf16","gemma":true})");
  CHECK(cache::CacheKey(cache::CurrentKeyInputs(*a, "sm_90a")) !=
        cache::CacheKey(cache::CurrentKeyInputs(*b, "sm_90a")));
}

// The render-code hash in the library must be the hash of the renderer / spec / family sources
// as they are in the tree now (CMakeLists.txt lists them: FLASHJIT_RENDER_SOURCES): a family
// change that the build did not fold into the key would let stale cached kernels be served.
TEST_CASE("cache key: the render-code hash covers the current family sources", "[cache_key]") {
  namespace fs = std::filesystem;
  const fs::path root = FLASHJIT_TEST_SOURCE_DIR;
  // The globs of FLASHJIT_RENDER_SOURCES: src/codegen/*.cc, src/spec/*.{cc,h},
  // src/ops/*/*_family.cc, src/ops/*/*_spec.h.
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  auto wanted = [&](const fs::path& rel) {
    const std::string dir = rel.parent_path().generic_string(), name = rel.filename().string();
    if (dir == "src/codegen") return ends_with(name, ".cc");
    if (dir == "src/spec") return ends_with(name, ".cc") || ends_with(name, ".h");
    if (rel.parent_path().parent_path().generic_string() == "src/ops")
      return ends_with(name, "_family.cc") || ends_with(name, "_spec.h");
    return false;
  };
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    const fs::path rel = fs::relative(e.path(), root);
    if (e.is_regular_file() && wanted(rel)) files.push_back(rel.generic_string());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 10);
  CHECK(std::count(files.begin(), files.end(), "src/ops/sampling/sampling_family.cc") == 1);
  std::string parts;
  for (const std::string& f : files) {
    std::ifstream in(root / f, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    parts += f + ":" + Sha256Hex(text.str()) + "\n";
  }
  CHECK(codegen::RenderCodeHash() == Sha256Hex(parts));
}

}  // namespace
}  // namespace flashjit
