// The decode CTAs an SM holds, as plans count them (ops::DecodeCtasPerSm), against the kernels
// NVRTC builds: each default variant is compiled for sm_90a, and its entries' registers and
// shared memory give the count the GPU's occupancy rules allow. A kernel change that moves a
// count fails here, before a plan assumes slots the GPU does not have (session 24: fp8 at D 256
// fits two CTAs an SM where the plans had counted one).
#include <flashjit/decode.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <utility>

#include "src/codegen/render.h"
#include "src/compile/compiler.h"
#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/occupancy.h"
#include "tests/unit/test_util.h"

namespace flashjit {
namespace {

TEST_CASE("occupancy: Hopper's limits on registers, threads and shared memory", "[compile]") {
  // Registers are allocated per warp in units of 256: 255 a thread (8160 a warp) takes 8192.
  CHECK(runtime::ResidentBlocksPerSm(255, 128, 0) == 2);
  CHECK(runtime::ResidentBlocksPerSm(256, 128, 0) == 2);
  CHECK(runtime::ResidentBlocksPerSm(168, 128, 0) == 3);
  CHECK(runtime::ResidentBlocksPerSm(169, 128, 0) == 2);  // 5408 a warp rounds to 5632
  CHECK(runtime::ResidentBlocksPerSm(96, 128, 0) == 5);
  CHECK(runtime::ResidentBlocksPerSm(32, 1024, 0) == 2);  // 2048 threads
  CHECK(runtime::ResidentBlocksPerSm(16, 32, 0) == 32);   // 32 blocks
  // 228 KB with 1 KB reserved a block.
  CHECK(runtime::ResidentBlocksPerSm(32, 128, 113 * 1024) == 2);
  CHECK(runtime::ResidentBlocksPerSm(32, 128, 113 * 1024 + 1) == 1);
  CHECK(runtime::ResidentBlocksPerSm(32, 128, 300 * 1024) == 1);  // at least one
}

TEST_CASE("decode plans: the resident CTAs an SM match the compiled kernels", "[compile]") {
  if (std::getenv("FLASHJIT_DECODE_STAGES") || std::getenv("FLASHJIT_DECODE_CTAS_PER_SM") ||
      std::getenv("FLASHJIT_DECODE_Q_SMEM") || std::getenv("FLASHJIT_DECODE_STAMPS") ||
      std::getenv("FLASHJIT_DECODE_FAST_INDEX")) {
    WARN("a decode variant knob is set: the default variants are not checked");
    return;
  }
  auto inc = compile::FindCudaIncludeDir("");
  REQUIRE(inc.ok());
  // The counts the plans use on an H200 (docs/perf/decode.md, sessions 24-25).
  struct Expected {
    DType kv;
    int head_dim, ctas, rope_ctas, persistent_ctas;
  };
  constexpr DType kBf16 = DType::kBF16, kE4m3 = DType::kF8E4M3;
  for (const Expected& e : {Expected{kBf16, 64, 4, 4, 3},
                            {kBf16, 128, 2, 2, 2},
                            {kBf16, 256, 1, 1, 1},
                            {kE4m3, 64, 4, 4, 3},
                            {kE4m3, 128, 3, 2, 2},
                            {kE4m3, 256, 2, 2, 2}}) {
    const int kv_bytes = DTypeBytes(e.kv);
    CHECK(ops::DecodeCtasPerSm(e.head_dim, kv_bytes) == e.ctas);
    CHECK(ops::DecodeCtasPerSm(e.head_dim, kv_bytes, true) == e.rope_ctas);
    CHECK(ops::DecodePersistentCtasPerSm(e.head_dim, kv_bytes) == e.persistent_ctas);
    // The plain variant and the one with every knob that adds code (soft cap, ALiBi, RoPE), with
    // the page size read at run time and compiled in (16; 1 and 64 for the plain variant).
    for (const auto [knobs, page] :
         {std::pair{false, 0}, {true, 0}, {false, 16}, {true, 16}, {false, 1}, {false, 64}}) {
      ops::DecodeSpec spec = ops::ChooseDecode(kBf16, e.kv, e.head_dim, knobs, knobs, knobs);
      spec.page_size = static_cast<uint8_t>(page);
      auto variant = spec.ToVariant();
      REQUIRE(variant.ok());
      auto tu = codegen::Render(*variant);
      REQUIRE(tu.ok());
      auto r = compile::Compile({*tu, variant->name(), "sm_90a", "occupancy-test"}, *inc);
      INFO(variant->name() << ": " << r.status().ToString());
      REQUIRE(r.ok());
      const compile::CompileResult::Entry* attention = r->entry("flashjit_decode");
      const compile::CompileResult::Entry* persistent = r->entry("flashjit_decode_persistent");
      REQUIRE(attention != nullptr);
      REQUIRE(persistent != nullptr);
      const int table = ops::DecodeKernelRegisters(e.head_dim, kv_bytes, false, spec.rope != 0);
      INFO("registers: attention " << attention->registers << " (table " << table
                                   << "), persistent " << persistent->registers);
      // The table is an upper bound that gives the compiled entry's count under this variant's
      // shared memory (at D 64 RoPE's 124 registers and the plain variant's 96 both give 4).
      const int smem = attention->static_smem_bytes + ops::DecodeSmemBytes(spec);
      CHECK(attention->registers <= table);
      CHECK(runtime::ResidentBlocksPerSm(attention->registers, 128, smem) ==
            runtime::ResidentBlocksPerSm(table, 128, smem));
      if (kv_bytes == 2) {
        const int persistent_table = ops::DecodeKernelRegisters(e.head_dim, kv_bytes, true);
        const int persistent_smem = persistent->static_smem_bytes + ops::DecodeSmemBytes(spec);
        CHECK(persistent->registers <= persistent_table);
        CHECK(runtime::ResidentBlocksPerSm(persistent->registers, 128, persistent_smem) ==
              runtime::ResidentBlocksPerSm(persistent_table, 128, persistent_smem));
      }
      // The whole count, static shared memory included, is the plans' (RoPE's with RoPE).
      CHECK(runtime::ResidentBlocksPerSm(attention->registers, 128, smem) ==
            (spec.rope ? e.rope_ctas : e.ctas));
    }
  }
}

// Plans made with RoPE count the CTAs its registers and shared memory allow (fp8 turns K in
// registers up to D 128, in shared memory at D 256); graph mode keeps Create's count (its grid is
// fixed then), as BatchDecode::Plan does.
TEST_CASE("decode plans: RoPE's shared memory sets the slots of fp8 plans", "[decode]") {
  if (std::getenv("FLASHJIT_DECODE_STAGES") || std::getenv("FLASHJIT_DECODE_CTAS_PER_SM")) {
    WARN("a decode variant knob is set: the default counts are not checked");
    return;
  }
  auto engine = test::MakeTestEngine("");
  auto slots = [&](DType kv, int d, bool rope) {
    BatchDecodeConfig c;
    c.num_qo_heads = 16;
    c.num_kv_heads = 8;
    c.head_dim = d;
    c.kv_dtype = kv;
    return ops::BatchDecodeLimits(*engine, c, 132, rope).slots;
  };
  CHECK(slots(DType::kF8E4M3, 256, false) == 264);
  CHECK(slots(DType::kF8E4M3, 256, true) == 264);  // since session 25: only K's rows converted
  CHECK(slots(DType::kF8E4M3, 128, false) == 396);
  CHECK(slots(DType::kF8E4M3, 128, true) == 264);  // since session 26: 232 registers
  CHECK(slots(DType::kF8E4M3, 64, true) == 528);   // since session 26: no convert buffer
  CHECK(slots(DType::kBF16, 128, true) == slots(DType::kBF16, 128, false));
}

}  // namespace
}  // namespace flashjit
