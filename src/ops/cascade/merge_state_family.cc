// The `merge_state` op family: attention states (output rows and base-2 log-sum-exps) merged.
#include <fmt/format.h>

#include "src/ops/cascade/merge_state_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const spec::OpFamily* MergeStateFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "merge_state";
    f.doc = "merge attention states: s = log2(sum 2^s_i), v = sum 2^(s_i - s) v_i per (seq, head)";
    f.header = "cascade/merge_state.cuh";
    f.fields = {
        spec::EnumField("dtype", {"f16", "bf16", "f32"}, nullptr, "dtype of the output rows v"),
        spec::IntField("vec", {1, 2, 4, 8}, 8, "v", "elements per vector access"),
        spec::IntField("lanes", {1, 2, 4, 8, 16, 32}, 16, "l", "lanes per (seq, head) row"),
        spec::IntField("batch", {1, 2, 4, 8}, 4, "b",
                       "states whose vectors a lane loads before accumulating them"),
        spec::IntField("chunks", {1, 2, 4}, 1, "c",
                       "vectors per state a lane loads (lanes * vec columns apart)"),
        spec::IntField("threads", {64, 128, 256, 512}, 256, "t", "threads per block"),
    };
    f.check = [](const spec::Json& s) {
      const int bytes = s["dtype"].get<std::string>() == "f32" ? 4 : 2;
      if (s["vec"].get<int>() * bytes > 16)
        return Status::InvalidArgument(fmt::format(
            "vec: {} elements of {} bytes exceed one 16-byte access", s["vec"].get<int>(), bytes));
      return Status::Ok();
    };
    f.entries = {{"flashjit_merge_state", "flashjit::cascade::merge_state",
                  "flashjit::cascade::MergeParams", "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DType = {};\n  static constexpr int kVec = {};\n"
          "  static constexpr int kLanes = {};\n  static constexpr int kBatch = {};\n"
          "  static constexpr int kChunks = {};\n  static constexpr int kThreads = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()), s["vec"].get<int>(), s["lanes"].get<int>(),
          s["batch"].get<int>(), s["chunks"].get<int>(), s["threads"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(MergeStateFamily);

}  // namespace

Result<VariantSpec> MergeStateSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "merge_state"},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"vec", vec},
                                     {"lanes", lanes},
                                     {"batch", batch},
                                     {"chunks", chunks},
                                     {"threads", threads}});
}

}  // namespace flashjit::ops
