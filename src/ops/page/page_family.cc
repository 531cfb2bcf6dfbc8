// The paged KV-cache families: append_paged_kv and batch_positions.
#include <fmt/format.h>

#include "src/ops/page/page_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const spec::OpFamily* AppendKvFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "append_paged_kv";
    f.doc = "Append ragged new K/V rows into a paged cache (NHD or HND strides), fp8 with scale";
    f.header = "page/append_paged_kv.cuh";
    f.fields = {
        spec::EnumField("dtype", {"f16", "bf16"}, nullptr, "dtype of the new k and v"),
        spec::EnumField("cache", {"f16", "bf16", "e4m3", "e5m2"}, nullptr, "cache dtype"),
        spec::IntField("vec", {1, 2, 4, 8}, 8, "v", "elements per vector access"),
        spec::IntField("threads", {64, 128, 256, 512}, 256, "t", "threads per block"),
        spec::IntField("items", {1, 2, 4}, 2, "i", "accesses per thread"),
        spec::BoolField("resolve", false, "rs", "resolve every item's page before the first store"),
        spec::BoolField("tokens", true, "tk",
                        "resolve each token's page once per block into shared memory"),
        spec::BoolField("loop", false, "lp",
                        "token-tile form over a resident grid: the next tile loaded while this "
                        "one is stored"),
    };
    f.check = [](const spec::Json& s) {
      const std::string c = s["cache"].get<std::string>();
      if ((c == "f16" || c == "bf16") && c != s["dtype"].get<std::string>())
        return Status::InvalidArgument(
            fmt::format("cache: a 16-bit cache must have the dtype of k/v ({}), got {}",
                        s["dtype"].get<std::string>(), c));
      if (s["loop"].get<bool>() && !s["tokens"].get<bool>())
        return Status::InvalidArgument(
            "loop: the resident-grid loop is a token-tile form (tokens)");
      return Status::Ok();
    };
    f.entries = {{"flashjit_append_paged_kv", "flashjit::page::append_paged_kv",
                  "flashjit::page::AppendKvParams", "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DType = {};\n  using CacheType = {};\n  static constexpr int kThreads = {};\n"
          "  static constexpr int kVec = {};\n  static constexpr int kItems = {};\n"
          "  static constexpr bool kResolve = {};\n  static constexpr bool kTokens = {};\n"
          "  static constexpr bool kLoop = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()),
          spec::CxxType(s["cache"].get<std::string>()), s["threads"].get<int>(),
          s["vec"].get<int>(), s["items"].get<int>(), s["resolve"].get<bool>(),
          s["tokens"].get<bool>(), s["loop"].get<bool>());
    };
    return f;
  }();
  return &f;
}

const spec::OpFamily* BatchPositionsFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "batch_positions";
    f.doc = "batch index and position of every appended token from append_indptr and seq_lens";
    f.header = "page/append_paged_kv.cuh";
    f.fields = {spec::IntField("threads", {64, 128, 256, 512}, 256, "t", "threads per block")};
    f.entries = {{"flashjit_batch_positions", "flashjit::page::batch_indices_positions",
                  "flashjit::page::BatchPositionsParams", "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      return fmt::format("  static constexpr int kThreads = {};\n", s["threads"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(AppendKvFamily);
FLASHJIT_REGISTER_FAMILY(BatchPositionsFamily);

}  // namespace

Result<VariantSpec> AppendKvSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "append_paged_kv"},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"cache", std::string(DTypeName(cache_dtype))},
                                     {"vec", vec},
                                     {"threads", threads},
                                     {"items", items},
                                     {"resolve", resolve != 0},
                                     {"tokens", tokens != 0},
                                     {"loop", loop != 0}});
}

Result<VariantSpec> BatchPositionsSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "batch_positions"}, {"threads", threads}});
}

}  // namespace flashjit::ops
