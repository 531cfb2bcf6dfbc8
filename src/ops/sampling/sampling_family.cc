// The sampling op families: their variant fields, templates and entry points.
#include <fmt/format.h>

#include "src/ops/sampling/sampling_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const char* const kInputs[] = {"probs", "logits"};
const char* const kFilters[] = {"none", "top_k", "top_p", "min_p", "joint", "top_k_first"};
const char* const kOutputs[] = {"sample", "probs", "mask"};

int IndexOf(const char* const* names, int count, const std::string& name) {
  for (int i = 0; i < count; ++i)
    if (name == names[i]) return i;
  return -1;
}

const spec::OpFamily* SamplingFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "sampling";
    f.doc = "Sorting-free filtered sampling, renormalisation and masking over rows of a vocabulary";
    f.header = "sampling/sampling.cuh";
    f.fields = {
        spec::EnumField("input", {"probs", "logits"}, nullptr, "what the input rows hold"),
        spec::EnumField("dtype", {"f32", "f16", "bf16"}, "f32", "input element type"),
        spec::EnumField("filter", {"none", "top_k", "top_p", "min_p", "joint", "top_k_first"},
                        "none", "which tokens are kept"),
        spec::EnumField("output", {"sample", "probs", "mask"}, "sample",
                        "a token per row, renormalised fp32 probs, or masked logits"),
        spec::IntField("threads", {32, 64, 128, 256, 512, 1024}, 1024, "t", "threads per row"),
        spec::IntField("vec", {1, 2, 4}, 4, "v", "elements per vector access"),
    };
    f.entries = {{"flashjit_sampling", "flashjit::sampling::sample_rows",
                  "flashjit::sampling::SamplingParams", "Variant::kThreads"}};
    f.check = [](const spec::Json& s) -> Status {
      const std::string input = s["input"], dtype = s["dtype"], output = s["output"],
                        filter = s["filter"];
      if (input == "probs" && dtype != "f32")
        return Status::InvalidArgument(
            fmt::format("sampling: dtype {} with input probs; probs must be f32", dtype));
      if (output == "mask" && (input != "logits" || filter != "top_k"))
        return Status::InvalidArgument("sampling: output mask needs input logits and filter top_k");
      return Status::Ok();
    };
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DType = {};\n  static constexpr int kInput = {};\n"
          "  static constexpr int kFilter = {};\n  static constexpr int kOutput = {};\n"
          "  static constexpr int kThreads = {};\n  static constexpr int kVec = {};\n"
          "  static constexpr bool kKeysAreLogits = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()),
          IndexOf(kInputs, 2, s["input"].get<std::string>()),
          IndexOf(kFilters, 6, s["filter"].get<std::string>()),
          IndexOf(kOutputs, 3, s["output"].get<std::string>()), s["threads"].get<int>(),
          s["vec"].get<int>(), s["output"].get<std::string>() == "mask");
    };
    return f;
  }();
  return &f;
}

const spec::OpFamily* SpeculativeFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "chain_speculative";
    f.doc = "Chain speculative sampling: accept draft tokens, resample the first rejection";
    f.header = "sampling/speculative.cuh";
    f.fields = {
        spec::IntField("threads", {32, 64, 128, 256, 512, 1024}, 1024, "t", "threads per row"),
        spec::IntField("vec", {1, 2, 4}, 4, "v", "elements per vector access"),
    };
    f.entries = {{"flashjit_chain_speculative", "flashjit::sampling::chain_speculative",
                  "flashjit::sampling::SpeculativeParams", "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DType = float;\n  static constexpr int kThreads = {};\n"
          "  static constexpr int kVec = {};\n  static constexpr bool kKeysAreLogits = false;\n",
          s["threads"].get<int>(), s["vec"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(SamplingFamily);
FLASHJIT_REGISTER_FAMILY(SpeculativeFamily);

}  // namespace

Result<VariantSpec> SamplingSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "sampling"},
                                     {"input", kInputs[static_cast<int>(input)]},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"filter", kFilters[static_cast<int>(filter)]},
                                     {"output", kOutputs[static_cast<int>(output)]},
                                     {"threads", threads},
                                     {"vec", vec}});
}

Result<VariantSpec> SpeculativeSpec::ToVariant() const {
  return SpecFactory::FromJsonValue(
      {{"op", "chain_speculative"}, {"threads", threads}, {"vec", vec}});
}

int ChooseSamplingThreads(int64_t vocab, int vec, int64_t batch) {
  // About eight accesses per thread per pass; a full block for long rows. Many rows share the
  // SMs, so past one row per SM a smaller block lets two rows run on one SM.
  const int64_t accesses = (vocab + vec - 1) / vec;
  int threads = 32;
  while (threads < 1024 && threads * 8 < accesses) threads *= 2;
  if (batch > 160 && threads > 512) threads = 512;
  return threads;
}

}  // namespace flashjit::ops
