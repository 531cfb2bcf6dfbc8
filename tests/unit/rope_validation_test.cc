// Bad arguments to the RoPE ops: InvalidArgument naming the argument, before launch.
#include <flashjit/rope.h>

#include "tests/unit/layer_validation_util.h"

namespace flashjit::test {
namespace {

const DType bf = DType::kBF16, i32 = DType::kI32;

TEST_CASE("rope ops reject bad shapes, dtypes, rotary_dim and options", "[rope][validation]") {
  Engine& e = DryEngine();
  TensorView q = Fake(bf, {16, 8, 128}), k = Fake(bf, {16, 2, 128});
  TensorView pos = Fake(i32, {16}), indptr = Fake(i32, {3}), offsets = Fake(i32, {2});
  CHECK_INVALID(ApplyRopePosIds(e, Fake(bf, {16, 1024}), k, q, k, pos), "q: expected 3");
  CHECK_INVALID(ApplyRopePosIds(e, q, Fake(DType::kF16, {16, 2, 128}), q, k, pos), "k: dtype");
  CHECK_INVALID(ApplyRopePosIds(e, q, Fake(bf, {15, 2, 128}), q, Fake(bf, {15, 2, 128}), pos),
                "k: dim 0 is 15");
  CHECK_INVALID(ApplyRopePosIds(e, q, Fake(bf, {16, 2, 64}), q, Fake(bf, {16, 2, 64}), pos),
                "k: dim 2 is 64");
  CHECK_INVALID(ApplyRopePosIds(e, q, k, Fake(bf, {16, 4, 128}), k, pos), "q_out: shape");
  CHECK_INVALID(ApplyRopePosIds(e, q, k, q, k, Fake(i32, {15})), "positions: dim 0 is 15");
  CHECK_INVALID(ApplyRopePosIds(e, q, k, q, k, Fake(DType::kF32, {16})), "positions: dtype");
  CHECK_INVALID(ApplyRopePosIdsInplace(e, q, k, pos, {127}), "rotary_dim: 127");
  CHECK_INVALID(ApplyRopePosIdsInplace(e, q, k, pos, {130}), "rotary_dim: 130");
  CHECK_INVALID(ApplyRopePosIdsInplace(e, q, k, pos, {0}), "rotary_dim: 0");
  CHECK_INVALID(ApplyRopePosIdsInplace(e, q, k, pos, {-1, false, 0.f, 1e4f}), "rope_scale");
  CHECK_INVALID(ApplyRopePosIdsInplace(e, q, k, pos, {-1, false, 1.f, -1.f}), "rope_theta");
  TensorView qs = q;
  qs.strides[2] = 2;
  CHECK_INVALID(ApplyRopePosIdsInplace(e, qs, k, pos), "q: innermost");
  TensorView odd = Fake(bf, {16, 8, 127});
  CHECK_INVALID(ApplyRopePosIdsInplace(e, odd, Fake(bf, {16, 2, 127}), pos, {126, true}),
                "interleaved RoPE needs");

  CHECK_INVALID(ApplyRope(e, q, k, q, k, Fake(i32, {1}), Fake(i32, {0})), "indptr");
  CHECK_INVALID(ApplyRope(e, q, k, q, k, indptr, Fake(i32, {3})), "offsets: dim 0 is 3");
  CHECK_INVALID(ApplyRope(e, q, k, q, k, Fake(DType::kI64, {3}), offsets), "indptr: dtype");

  Llama31RopeOptions lo;
  lo.high_freq_factor = 0.5f;
  CHECK_INVALID(ApplyLlama31RopePosIdsInplace(e, q, k, pos, lo), "high_freq_factor");
  lo = {};
  lo.old_context_len = 0;
  CHECK_INVALID(ApplyLlama31RopeInplace(e, q, k, indptr, offsets, lo), "old_context_len");

  TensorView q2 = Fake(bf, {16, 1024}), k2 = Fake(bf, {16, 256});
  TensorView cache = Fake(DType::kF32, {4096, 128});
  CHECK_INVALID(ApplyRopeWithCosSinCacheInplace(e, pos, q2, k2, 100, cache), "query: width 1024");
  CHECK_INVALID(ApplyRopeWithCosSinCacheInplace(e, pos, q2, k2, 128, Fake(bf, {4096, 128})),
                "cos_sin_cache: dtype");
  CHECK_INVALID(ApplyRopeWithCosSinCacheInplace(e, pos, q2, k2, 128, Fake(DType::kF32, {64, 256})),
                "rotary_dim: 256");
  CHECK_INVALID(ApplyRopeWithCosSinCacheInplace(e, pos, q2, k2, 128, Fake(DType::kF32, {64, 127})),
                "rotary_dim: 127");
  CHECK_INVALID(ApplyRopeWithCosSinCacheInplace(e, pos, q2, k2, 128, cache, true, nullptr, 4096),
                "beyond cos_sin_cache");
}

}  // namespace
}  // namespace flashjit::test
