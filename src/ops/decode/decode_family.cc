// The decode op family: its variant fields, template and entry points.
#include <fmt/format.h>

#include <cstdlib>

#include "attention/decode_params.cuh"
#include "src/ops/decode/decode_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const spec::OpFamily* DecodeFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "decode";
    f.doc = "decode attention over a paged or contiguous KV cache (tensor cores, split-KV)";
    f.header = "attention/decode_kernels.cuh";
    f.fields = {
        spec::EnumField("dtype_q", {"f16", "bf16"}, nullptr, "query and output dtype"),
        spec::EnumField("dtype_kv", {"f16", "bf16", "e4m3", "e5m2"}, nullptr,
                        "KV cache dtype: dtype_q, or fp8"),
        spec::IntField("head_dim", {64, 128, 256}, nullptr, "h", "head dimension"),
        spec::IntRangeField("stages", 2, 8, 3, "s", "cp.async pipeline depth (tiles of 64 keys)"),
        spec::IntField("page_size", {0, 1, 2, 4, 8, 16, 32, 64}, 0, "p",
                       "page size compiled in (0: read at run time); items start on a page"),
        spec::BoolField("soft_cap", false, "cap", "logits soft cap: cap * tanh(x / cap)"),
        spec::BoolField("alibi", false, "alibi", "ALiBi position bias"),
        spec::BoolField("rope", false, "rope", "RoPE on q and k inside the kernel"),
        spec::BoolField("fast_index", false, "fix",
                        "CTA item and head tile from launch-computed divisors"),
        spec::BoolField("steal", false, "stl",
                        "pair stealing: neighbouring chunks of a split request share the tiles "
                        "around their boundary"),
        spec::BoolField("q_smem", false, "qs",
                        "Q's tensor-core fragments read from shared memory at each step"),
        spec::BoolField("stamps", false, "stamp",
                        "diagnostic: per-CTA %globaltimer / clock stamps into params.stamps"),
    };
    f.check = [](const spec::Json& s) -> Status {
      const std::string q = s["dtype_q"], kv = s["dtype_kv"];
      if (kv != q && kv != "e4m3" && kv != "e5m2")
        return Status::InvalidArgument(fmt::format(
            "dtype_kv: '{}' with dtype_q '{}'; a 16-bit KV cache must have dtype_q's dtype, or "
            "use e4m3 / e5m2",
            kv, q));
      const int kv_bytes = kv.size() == 4 && kv[0] == 'e' ? 1 : 2;
      const int smem = attention::DecodeSmemBytes(s["head_dim"].get<int>(), kv_bytes,
                                                  s["stages"].get<int>(), s["rope"].get<bool>());
      if (smem > 227 * 1024)
        return Status::InvalidArgument(
            fmt::format("stages: {} stages need {} bytes of shared memory; at most 232448 fit",
                        s["stages"].get<int>(), smem));
      return Status::Ok();
    };
    f.entries = {{"flashjit_decode", "flashjit::attention::decode_attention",
                  "flashjit::attention::DecodeParams", "Variant::kThreads"},
                 {"flashjit_decode_merge", "flashjit::attention::decode_merge",
                  "flashjit::attention::DecodeMergeParams", "Variant::kThreads"},
                 {"flashjit_decode_persistent", "flashjit::attention::decode_persistent",
                  "flashjit::attention::DecodeParams", "Variant::kThreads"}};
    f.variant_body = [](const spec::Json& s) {
      return fmt::format(
          "  using DTypeQ = {};\n  using DTypeKV = {};\n  static constexpr int kThreads = 128;\n"
          "  static constexpr int kHeadDim = {};\n  static constexpr int kStages = {};\n"
          "  static constexpr bool kSoftCap = {};\n  static constexpr bool kAlibi = {};\n"
          "  static constexpr bool kRope = {};\n  static constexpr bool kStamps = {};\n"
          "  static constexpr bool kFastIndex = {};\n  static constexpr bool kSteal = {};\n"
          "  static constexpr bool kQSmem = {};\n  static constexpr int kPageSize = {};\n",
          spec::CxxType(s["dtype_q"].get<std::string>()),
          spec::CxxType(s["dtype_kv"].get<std::string>()), s["head_dim"].get<int>(),
          s["stages"].get<int>(), s["soft_cap"].get<bool>(), s["alibi"].get<bool>(),
          s["rope"].get<bool>(), s["stamps"].get<bool>(), s["fast_index"].get<bool>(),
          s["steal"].get<bool>(), s["q_smem"].get<bool>(), s["page_size"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(DecodeFamily);

}  // namespace

Result<VariantSpec> DecodeSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "decode"},
                                     {"dtype_q", std::string(DTypeName(q_dtype))},
                                     {"dtype_kv", std::string(DTypeName(kv_dtype))},
                                     {"head_dim", head_dim},
                                     {"stages", stages},
                                     {"page_size", page_size},
                                     {"soft_cap", soft_cap != 0},
                                     {"alibi", alibi != 0},
                                     {"rope", rope != 0},
                                     {"fast_index", fast_index != 0},
                                     {"steal", steal != 0},
                                     {"q_smem", q_smem != 0},
                                     {"stamps", stamps != 0}});
}

int DecodeStages(int head_dim, int kv_bytes) {
  // Tuning knob for benchmarks: FLASHJIT_DECODE_STAGES (2..8) overrides the depth, as far as
  // shared memory allows (up to session 12 only up to D 128).
  static const int kOverride = [] {
    const char* v = std::getenv("FLASHJIT_DECODE_STAGES");
    const int n = v ? std::atoi(v) : 0;
    return n >= 2 && n <= 8 ? n : 0;
  }();
  if (kOverride) {
    int n = kOverride;
    while (n > 2 && attention::DecodeSmemBytes(head_dim, kv_bytes, n, true) > 227 * 1024) --n;
    return n;
  }
  // About 32 KB of K+V per stage in flight for 16-bit caches; two CTAs per SM up to D = 128.
  // D 256 (one CTA of 4 warps per SM, 255 registers): 3 stages (201 KB) read no faster than 2 on
  // the H200 (session 13, and session 14 with 8 warps); what held Gemma-2's D 256 at 2.2-2.6 TB/s
  // was the soft cap's tanhf and division (SoftCap since session 14: 4.3 TB/s, as D 128).
  // D 64: 3 stages (51 KB: 4 CTAs per SM) read faster than 4 (67 KB: 3 CTAs) on the H200
  // (session 14, d64 configuration, two rounds, queued): -1.4 to -5.7 % at 10 of 12 shapes,
  // +0.6 / +2.2 % at B=16 / 64 L=16k; 2 stages (5 CTAs) lost at every long shape (+3 to +10 %).
  if (kv_bytes == 2) return head_dim == 64 ? 3 : head_dim == 128 ? 3 : 2;
  return head_dim == 64 ? 6 : head_dim == 128 ? 4 : 2;
}

int DecodeSmemBytes(const DecodeSpec& s) {
  return attention::DecodeSmemBytes(s.head_dim, DTypeBytes(s.kv_dtype), s.stages, s.rope != 0);
}

DecodeSpec ChooseDecode(DType q_dtype, DType kv_dtype, int head_dim, bool soft_cap, bool alibi,
                        bool rope) {
  DecodeSpec s;
  s.q_dtype = q_dtype;
  s.kv_dtype = kv_dtype;
  s.head_dim = static_cast<uint16_t>(head_dim);
  s.stages = static_cast<uint8_t>(DecodeStages(head_dim, DTypeBytes(kv_dtype)));
  s.soft_cap = soft_cap;
  s.alibi = alibi;
  s.rope = rope;
  s.stamps = DecodeStamps();
  s.fast_index = DecodeFastIndexMode() == kFastIndexAlways;  // auto: BatchDecode::Plan
  s.q_smem = DecodeQSmem(head_dim, kv_dtype);
  return s;
}

}  // namespace flashjit::ops
