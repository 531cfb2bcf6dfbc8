// The rmsnorm op family: its variant fields, template and entry point.
#include <fmt/format.h>

#include "src/ops/norm/rmsnorm_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const spec::OpFamily* RmsNormFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "rmsnorm";
    f.doc = "RMSNorm over rows: out = x / rms(x) * weight (gemma: weight + 1)";
    f.header = "norm/rmsnorm.cuh";
    f.fields = {
        spec::EnumField("dtype", {"f16", "bf16"}, nullptr, "activation and weight dtype"),
        spec::IntField("vec", {1, 2, 4, 8}, 8, "v", "elements per vector access"),
        spec::IntField("threads", {32, 64, 128, 256, 512, 1024}, 256, "t", "threads per block"),
        spec::IntRangeField("items", 0, 16, 4, "i",
                            "accesses per thread held in registers; 0 streams the row twice"),
        spec::BoolField("gemma", false, "gemma", "scale by weight + 1 (Gemma)"),
    };
    f.entries = {{"flashjit_rmsnorm", "flashjit::norm::rmsnorm", "flashjit::norm::RmsNormParams",
                  "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DType = {};\n  static constexpr int kThreads = {};\n"
          "  static constexpr int kVec = {};\n  static constexpr int kItems = {};\n"
          "  static constexpr bool kGemma = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()), s["threads"].get<int>(),
          s["vec"].get<int>(), s["items"].get<int>(), s["gemma"].get<bool>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(RmsNormFamily);

int NextPow2(int64_t x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

}  // namespace

Result<VariantSpec> RmsNormSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "rmsnorm"},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"vec", vec},
                                     {"threads", threads},
                                     {"items", items},
                                     {"gemma", gemma != 0}});
}

RmsNormSpec ChooseRmsNorm(DType dtype, int64_t hidden, int vec, bool gemma) {
  RmsNormSpec s;
  s.dtype = dtype;
  s.vec = static_cast<uint8_t>(vec);
  s.gemma = gemma;
  const int64_t accesses = (hidden + vec - 1) / vec;
  // About four 16-byte loads in flight per thread, in as many threads as that needs.
  int threads = NextPow2((accesses + 3) / 4);
  threads = threads < 32 ? 32 : (threads > 1024 ? 1024 : threads);
  const int64_t items = (accesses + threads - 1) / threads;
  s.threads = static_cast<uint16_t>(threads);
  s.items = items > 16 ? 0 : static_cast<uint8_t>(NextPow2(items));
  return s;
}

}  // namespace flashjit::ops
