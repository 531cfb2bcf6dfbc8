// The `norm` op family: RMSNorm, fused add + RMSNorm and LayerNorm over rows.
#include <fmt/format.h>

#include <algorithm>

#include "src/ops/norm/norm_spec.h"
#include "src/spec/family.h"
#include "src/spec/spec_factory.h"

namespace flashjit::ops {
namespace {

const char* KindName(NormKind k) {
  switch (k) {
    case NormKind::kRms:
      return "rms";
    case NormKind::kFusedAdd:
      return "fused_add";
    case NormKind::kLayer:
      return "layer";
  }
  return "rms";
}

const spec::OpFamily* NormFamily() {
  static const spec::OpFamily f = [] {
    spec::OpFamily f;
    f.op = "norm";
    f.doc =
        "Row normalization: rms (x / rms(x) * w), fused_add (residual += x; x = rmsnorm("
        "residual)), layer ((x - mean) / std * gamma + beta); fp32 accumulation";
    f.header = "norm/norm.cuh";
    f.fields = {
        spec::EnumField("dtype", {"f16", "bf16"}, nullptr, "activation dtype"),
        spec::EnumField("wdtype", {"f16", "bf16", "f32"}, nullptr, "weight and bias dtype"),
        spec::EnumField("kind", {"rms", "fused_add", "layer"}, "rms", "which normalization"),
        spec::IntField("vec", {1, 2, 4, 8}, 8, "v", "elements per vector access"),
        spec::IntField("threads", {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, 256, "t",
                       "threads per row"),
        spec::IntField("rows", {1, 2, 4, 8, 16, 32, 64}, 1, "r", "rows per block"),
        spec::IntRangeField("items", 0, 16, 4, "i",
                            "accesses per thread held in registers; 0 streams the row twice"),
        spec::BoolField("gemma", false, "gemma", "scale by weight + 1 (Gemma)"),
        spec::BoolField("streaming", true, "cs", "evict-first hints on activation traffic"),
        spec::BoolField("prefetch", true, "pf",
                        "load the next row group before reducing the current one"),
        spec::BoolField("wprefetch", false, "wp",
                        "one-row-per-block kernel: prefetch the weights into L1 before the "
                        "reduction"),
        spec::IntField("minb", {0, 2, 4, 6, 8, 10, 12, 16}, 0, "mb",
                       "launch bounds: at least this many blocks per SM (caps the registers); 0 "
                       "= no minimum (the compiler's choice; a minimum of 1 would let it use "
                       "more registers than with none)"),
        spec::BoolField("grid_stride", false, "gs",
                        "without prefetch: the resident-grid loop instead of one row group per "
                        "block (the previous kernel, kept for comparison)"),
    };
    f.check = [](const spec::Json& s) {
      const int threads = s["threads"].get<int>(), rows = s["rows"].get<int>();
      if (rows > 1 && threads > 32)
        return Status::InvalidArgument(fmt::format(
            "rows: {} rows per block needs threads <= 32, got threads {}", rows, threads));
      if (threads * rows * s["minb"].get<int>() > 2048)
        return Status::InvalidArgument(
            fmt::format("minb: {} blocks of {} threads exceed 2048 threads per SM",
                        s["minb"].get<int>(), threads * rows));
      if (threads * rows > 1024)
        return Status::InvalidArgument(
            fmt::format("threads * rows = {} exceeds 1024 threads per block", threads * rows));
      if (s["kind"] == "layer" && s["gemma"].get<bool>())
        return Status::InvalidArgument("gemma: only for kind rms or fused_add, not layer");
      return Status::Ok();
    };
    f.entries = {{"flashjit_norm", "flashjit::norm::norm", "flashjit::norm::NormParams",
                  "Variant::kThreads * Variant::kRows, Variant::kMinBlocks"}};
    f.variant_body = [](const spec::Json& s) {
      const std::string kind = s["kind"].get<std::string>();
      return fmt::format(
          "  using DType = {};\n  using WType = {};\n"
          "  static constexpr int kKind = flashjit::norm::{};\n"
          "  static constexpr int kThreads = {};\n  static constexpr int kRows = {};\n"
          "  static constexpr int kVec = {};\n  static constexpr int kItems = {};\n"
          "  static constexpr bool kGemma = {};\n  static constexpr bool kStreaming = {};\n"
          "  static constexpr bool kPrefetch = {};\n  static constexpr bool kGridStride = {};\n  "
          "static constexpr bool kPrefetchWeights = {};\n  static constexpr int kMinBlocks = {};\n",
          spec::CxxType(s["dtype"].get<std::string>()),
          spec::CxxType(s["wdtype"].get<std::string>()),
          kind == "rms" ? "kRms" : (kind == "fused_add" ? "kFusedAdd" : "kLayer"),
          s["threads"].get<int>(), s["rows"].get<int>(), s["vec"].get<int>(), s["items"].get<int>(),
          s["gemma"].get<bool>(), s["streaming"].get<bool>(), s["prefetch"].get<bool>(),
          s["grid_stride"].get<bool>(), s["wprefetch"].get<bool>(), s["minb"].get<int>());
    };
    return f;
  }();
  return &f;
}

FLASHJIT_REGISTER_FAMILY(NormFamily);

int NextPow2(int64_t x) {
  int p = 1;
  while (p < x) p *= 2;
  return p;
}

}  // namespace

Result<VariantSpec> NormSpec::ToVariant() const {
  return SpecFactory::FromJsonValue({{"op", "norm"},
                                     {"dtype", std::string(DTypeName(dtype))},
                                     {"wdtype", std::string(DTypeName(wdtype))},
                                     {"kind", KindName(kind)},
                                     {"vec", vec},
                                     {"threads", threads},
                                     {"rows", rows},
                                     {"items", items},
                                     {"gemma", gemma != 0},
                                     {"streaming", streaming != 0},
                                     {"prefetch", prefetch != 0},
                                     {"grid_stride", grid_stride != 0},
                                     {"wprefetch", wprefetch != 0},
                                     {"minb", minb}});
}

NormSpec ChooseNorm(NormKind kind, DType dtype, DType wdtype, int64_t hidden, int vec, bool gemma,
                    int64_t rows) {
  NormSpec s;
  s.dtype = dtype;
  s.wdtype = wdtype;
  s.kind = kind;
  s.vec = static_cast<uint8_t>(vec);
  s.gemma = gemma;
  const int64_t accesses = (hidden + vec - 1) / vec;
  // Measured on the H200 (2026-11-29, docs/perf/layer_ops.md, "Session 2").
  if (accesses <= 32) {
    // QK-norm and other short rows: four accesses per thread, up to 8 threads per row,
    // 256-thread blocks over a resident grid that prefetches the next rows (16384x32x128:
    // 73.0 us against 75.9 with two accesses per thread and 77.8 with one).
    const int threads = std::max(1, NextPow2(accesses) / 4);
    s.threads = static_cast<uint16_t>(threads);
    s.rows = static_cast<uint8_t>(std::min(64, 256 / threads));
    s.items = static_cast<uint8_t>(NextPow2((accesses + threads - 1) / threads));
    if (accesses > 4 && accesses <= 8) {
      // Rows of 5-8 accesses (QK-norm with 64-wide heads): one access per thread, 32 rows per
      // 256-thread block, one block per group. A warp then loads 4 whole rows (512 contiguous
      // bytes) instead of 32-byte pieces of 16 rows, in 30 registers instead of 112: 16384x8x64
      // 12.5 us queued against 14.3 for t2 r64 i4 over the prefetching grid (docs/perf/
      // layer_ops.md, "Session 13").
      s.threads = 8;
      s.rows = 32;
      s.items = 1;
      s.prefetch = 0;
    }
    return s;
  }
  if (accesses <= 128) {
    // Short rows (small hidden): a warp per row, 8 rows per block.
    s.threads = 32;
    s.rows = 8;
    s.items = static_cast<uint8_t>(NextPow2((accesses + 31) / 32));
    return s;
  }
  // One block per row with the row in registers (norm_one_pass.cuh), up to 4096 accesses.
  if (accesses <= 4096) {
    int threads;
    if (rows <= 128) {
      // Fewer rows than SMs: latency, not bandwidth. One access per thread (64x4096: 7.5 us
      // against 9.4 with eight).
      threads = std::min<int>(1024, NextPow2(accesses));
    } else {
      // Threads by the row's 16-byte units, so that a row of narrower accesses (a hidden size
      // not a multiple of 8 in 16-bit types: rows only 8-byte aligned) gets the threads of a
      // full-width row of the same bytes and proportionally more accesses per thread, not 4x
      // the threads with most of them idle: rms 16384x4100 bf16 took t512 i4 with 8-byte
      // accesses (one row of 8.2 KB per 512-thread block, 4 blocks per SM) and ran at 3.02 TB/s
      // queued against 3.83 for 16384x4096 (docs/perf/layer_ops.md, "Session 13"). For
      // 16-byte accesses units == accesses: the rules below are those measured in session 2.
      const int64_t units = (hidden * DTypeBytes(dtype) + 15) / 16;
      if (kind != NormKind::kLayer && units <= 1024) {
        // 128 threads, up to 8 accesses each (rms 8192x8192 73.8 us, 16384x4096 71.6 us; fused
        // add 137.4 / 136.5 us).
        threads = 128;
      } else {
        // Four accesses per thread (rms 4096x16384 72.3 us; layernorm with f32 gamma and beta,
        // 8192x8192, 73.3 us against 82.6 for the prefetching resident grid).
        threads = std::max(32, std::min(1024, NextPow2((units + 3) / 4)));
        // LayerNorm: at most 256 threads while 8 accesses each hold the row (hidden <= 16384 in
        // 16-bit types). Its 512-thread blocks take 42 registers a thread, so only 2 fit on an
        // SM (2 rows in flight: 48 KB at hidden 12288) where 256 x 8 (66 registers) fits 3:
        // 16384x12288 259.5 -> 214.9 us queued (3.10 -> 3.75 TB/s), 16384x16384 305.7 -> 272.8
        // (3.51 -> 3.94) (session 13).
        if (kind == NormKind::kLayer && threads > 256 && units <= 2048) threads = 256;
      }
      // More than 16 accesses per thread (2-byte or 4-byte accesses): the rules by accesses.
      if (NextPow2((accesses + threads - 1) / threads) > 16)
        threads = kind != NormKind::kLayer && accesses <= 1024
                      ? 128
                      : std::max(32, std::min(1024, NextPow2((accesses + 3) / 4)));
    }
    s.threads = static_cast<uint16_t>(threads);
    s.items = static_cast<uint8_t>(NextPow2((accesses + threads - 1) / threads));
    s.prefetch = 0;
    // Launch bounds of 16 blocks of 128 per SM for rms with up to 4 accesses per thread: 32
    // registers (38 without, 12 blocks), no spill (nvcc -Xptxas -v, sm_90a); 16384x4096 -0.9 %
    // back to back, -1.1 % synced (docs/perf/layer_ops.md, "Session 8").
    if (kind == NormKind::kRms && threads == 128 && s.items <= 4) s.minb = 16;
    return s;
  }
  // Longer rows: 1024 threads over a resident grid that prefetches the next row (up to 16
  // accesses per thread), else the streaming two-pass kernel.
  const int64_t items = (accesses + 1023) / 1024;
  s.threads = 1024;
  s.rows = 1;
  s.items = items > 16 ? 0 : static_cast<uint8_t>(NextPow2(items));
  return s;
}

}  // namespace flashjit::ops
