// The `gated_activation` op family: silu / gelu / gelu_tanh of the first half times the second.
#include <fmt/format.h>

#include "src/ops/activation/activation_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const char* ActName(ActKind a) {
  return a == ActKind::kSilu ? "silu" : (a == ActKind::kGelu ? "gelu" : "gelu_tanh");
}

const spec::OpFamily* ActivationFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "gated_activation";
    f.doc = "out = act(x[:, :d]) * x[:, d:] with act silu, gelu (erf) or gelu_tanh";
    f.header = "activation/gated_activation.cuh";
    f.fields = {
        spec::EnumField("dtype", {"f16", "bf16"}, nullptr, "activation dtype"),
        spec::EnumField("act", {"silu", "gelu", "gelu_tanh"}, "silu", "activation of the gate"),
        spec::IntField("vec", {1, 2, 4, 8}, 8, "v", "elements per vector access"),
        spec::IntField("threads", {32, 64, 128, 256, 512, 1024}, 128, "t", "threads per block"),
        spec::IntField("items", {1, 2, 4, 8}, 2, "i", "accesses per thread"),
    };
    f.entries = {{"flashjit_gated_activation", "flashjit::activation::gated_activation",
                  "flashjit::activation::ActivationParams", "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      const std::string act = s["act"].get<std::string>();
      return fmt::format(
          "  using DType = {};\n  static constexpr int kAct = flashjit::activation::{};\n"
          "  static constexpr int kThreads = {};\n  static constexpr int kVec = {};\n"
          "  static constexpr int kItems = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()),
          act == "silu" ? "kSilu" : (act == "gelu" ? "kGelu" : "kGeluTanh"),
          s["threads"].get<int>(), s["vec"].get<int>(), s["items"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(ActivationFamily);

}  // namespace

Result<VariantSpec> ActivationSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "gated_activation"},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"act", ActName(act)},
                                     {"vec", vec},
                                     {"threads", threads},
                                     {"items", items}});
}

}  // namespace flashjit::ops
