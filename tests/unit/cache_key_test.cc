// The cache key: stable when nothing changed, different when any input changed.
#include "src/cache/cache_key.h"

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace flashjit
