// The `rope` op family: rotary embedding of q and k from positions, indptr + offsets, or a
// precomputed cos/sin cache.
#include <fmt/format.h>

#include "src/ops/rope/rope_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const char* ModeName(RopeMode m) {
  return m == RopeMode::kPosIds ? "pos_ids" : (m == RopeMode::kIndptr ? "indptr" : "cache");
}

const char* KernelName(uint8_t k) { return k == 0 ? "warp" : (k == 1 ? "tile" : "row"); }

const char* KernelSymbol(const std::string& k) {
  return k == "warp" ? "kWarpKernel" : (k == "tile" ? "kTileKernel" : "kRowKernel");
}

const spec::OpFamily* RopeFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "rope";
    f.doc = "Rotary position embedding of q and k (NeoX or interleaved GPT-J pairs)";
    f.header = "rope/rope.cuh";
    f.fields = {
        spec::EnumField("dtype", {"f16", "bf16"}, nullptr, "q and k dtype"),
        spec::EnumField("pos", {"i32", "i64"}, "i32", "position dtype"),
        spec::EnumField("mode", {"pos_ids", "indptr", "cache"}, "pos_ids",
                        "where positions and angles come from"),
        spec::BoolField("interleave", false, "il", "rotate pairs (2i, 2i+1) instead of halves"),
        spec::IntField("vec", {1, 2, 4, 8}, 8, "v", "elements per vector access"),
        spec::IntField("warps", {1, 2, 4, 8}, 4, "w", "warps per block (warp kernel: tokens)"),
        spec::EnumField("kernel", {"row", "warp", "tile"}, "row",
                        "row: threads own a head chunk of a token and loop over its heads; warp: "
                        "a warp per token; tile: shared cos/sin per (token, frequency)"),
        spec::IntField(
            "items", {1, 2, 3, 4, 5, 6, 8}, 4, "i",
            "tile: work items (head chunks) per thread; row: heads in flight per thread"),
        spec::IntField("minb", {1, 2, 3, 4, 6, 8, 12, 16}, 1, "mb",
                       "launch bounds: blocks per SM the registers must allow"),
    };
    f.check = [](const spec::Json& s) {
      if (s["interleave"].get<bool>() && s["vec"].get<int>() < 2)
        return Status::InvalidArgument("vec: interleaved RoPE needs vec >= 2 (whole pairs)");
      return Status::Ok();
    };
    f.entries = {{"flashjit_rope", "flashjit::rope::rope", "flashjit::rope::RopeParams",
                  "Variant::kWarps * 32, Variant::kMinBlocks"}};
    f.variant_body = [](const spec::Json& s) {
      const std::string mode = s["mode"].get<std::string>();
      return fmt::format(
          "  using DType = {};\n  using PosType = {};\n"
          "  static constexpr int kMode = flashjit::rope::{};\n"
          "  static constexpr bool kInterleave = {};\n  static constexpr int kVec = {};\n"
          "  static constexpr int kWarps = {};\n  static constexpr int kKernel = "
          "flashjit::rope::{};\n"
          "  static constexpr int kItems = {};\n  static constexpr int kMinBlocks = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()), s["pos"] == "i32" ? "int32_t" : "int64_t",
          mode == "pos_ids" ? "kPosIds" : (mode == "indptr" ? "kIndptr" : "kCache"),
          s["interleave"].get<bool>(), s["vec"].get<int>(), s["warps"].get<int>(),
          KernelSymbol(s["kernel"].get<std::string>()), s["items"].get<int>(),
          s["minb"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(RopeFamily);

}  // namespace

Result<VariantSpec> RopeSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "rope"},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"pos", std::string(DTypeName(pos_dtype))},
                                     {"mode", ModeName(mode)},
                                     {"interleave", interleave != 0},
                                     {"vec", vec},
                                     {"warps", warps},
                                     {"kernel", KernelName(kernel)},
                                     {"items", items},
                                     {"minb", minb}});
}

}  // namespace flashjit::ops
