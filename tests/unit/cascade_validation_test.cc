// The attention-state merges: bad arguments return InvalidArgument naming the argument before
// any launch; aliasing is refused unless an output is exactly an input; valid calls (including
// interleaved views of one stacked tensor) build their kernel in a dry run.
#include <flashjit/cascade.h>

#include "tests/unit/layer_validation_util.h"

namespace flashjit::test {
namespace {

const DType bf = DType::kBF16, f32 = DType::kF32;

#define CHECK_OK(expr)                    \
  do {                                    \
    const ::flashjit::Status _s = (expr); \
    INFO(_s.ToString());                  \
    CHECK(_s.ok());                       \
  } while (0)

// A fake tensor at its own (never dereferenced) address: slot k is 16 MiB apart from slot k+1.
TensorView At(int slot, DType dtype, std::initializer_list<int64_t> shape) {
  return TensorView::Contiguous(
      reinterpret_cast<void*>(uintptr_t{0x100000000} + (static_cast<uintptr_t>(slot) << 24)), dtype,
      shape);
}

TEST_CASE("merge_state rejects bad shapes, dtypes and devices", "[cascade][validation]") {
  Engine& e = DryEngine();
  const TensorView va = At(0, bf, {7, 4, 128}), sa = At(1, f32, {7, 4}),
                   vb = At(2, bf, {7, 4, 128}), sb = At(3, f32, {7, 4}),
                   vo = At(4, bf, {7, 4, 128}), so = At(5, f32, {7, 4});
  CHECK_OK(MergeState(e, va, sa, vb, sb, vo, so));
  CHECK_OK(MergeState(e, va, sa, vb, sb, vo, TensorView{}));  // s_out absent
  CHECK_INVALID(MergeState(e, At(0, bf, {7, 4}), sa, vb, sb, vo, so), "v_a: expected 3");
  CHECK_INVALID(MergeState(e, va, sa, vb, sb, At(4, DType::kF8E4M3, {7, 4, 128}), so),
                "v_out: dtype e4m3 not supported; allowed: f16, bf16, f32");
  CHECK_INVALID(MergeState(e, va, sa, At(2, DType::kF16, {7, 4, 128}), sb, vo, so), "v_b: dtype");
  CHECK_INVALID(MergeState(e, va, At(1, bf, {7, 4}), vb, sb, vo, so), "s_a: dtype bf16");
  CHECK_INVALID(MergeState(e, va, sa, At(2, bf, {8, 4, 128}), sb, vo, so), "v_b: dim 0 is 8");
  CHECK_INVALID(MergeState(e, va, sa, vb, At(3, f32, {7, 5}), vo, so), "s_b: dim 1 is 5");
  CHECK_INVALID(MergeState(e, At(0, bf, {7, 4, 64}), sa, vb, sb, vo, so), "v_a: dim 2 is 64");
  CHECK_INVALID(MergeState(e, va, sa, vb, sb, vo, At(5, f32, {7, 4, 1})), "s_out: expected 2");
  CHECK_INVALID(
      MergeState(e, At(0, bf, {7, 4, 0}), sa, At(2, bf, {7, 4, 0}), sb, At(4, bf, {7, 4, 0}), so),
      "head_dim must be >= 1");
  TensorView strided = vb;
  strided.strides[2] = 2;
  CHECK_INVALID(MergeState(e, va, sa, strided, sb, vo, so), "v_b: innermost");
  TensorView other = sb;
  other.device = 2;
  CHECK_INVALID(MergeState(e, va, sa, vb, other, vo, so), "s_b: on cuda:2");
  // 2^31 (seq, head) rows: the kernels index rows in 31 bits. Fake tensors 64 GiB apart.
  auto far = [](int slot, DType dtype, std::initializer_list<int64_t> shape) {
    return TensorView::Contiguous(
        reinterpret_cast<void*>(uintptr_t{1} << 40 | uintptr_t(slot) << 36), dtype, shape);
  };
  CHECK_INVALID(MergeState(e, far(0, bf, {65536, 32768, 1}), far(1, f32, {65536, 32768}),
                           far(2, bf, {65536, 32768, 1}), far(3, f32, {65536, 32768}),
                           far(4, bf, {65536, 32768, 1}), far(5, f32, {65536, 32768})),
                "v: 2147483648 (seq, head) rows are too many for one launch (at most 2^31 - 1)");
}

TEST_CASE("merge_state refuses outputs that share memory with inputs or themselves",
          "[cascade][validation]") {
  Engine& e = DryEngine();
  const TensorView va = At(0, bf, {7, 4, 128}), sa = At(1, f32, {7, 4}),
                   vb = At(2, bf, {7, 4, 128}), sb = At(3, f32, {7, 4}),
                   vo = At(4, bf, {7, 4, 128}), so = At(5, f32, {7, 4});
  // An output may be an input itself.
  CHECK_OK(MergeState(e, va, sa, vb, sb, va, sa));
  CHECK_OK(MergeState(e, va, sa, vb, sb, vb, sb));
  // A shifted view of an input is refused.
  TensorView shifted = va;
  shifted.data = static_cast<char*>(va.data) + 256;
  CHECK_INVALID(MergeState(e, va, sa, vb, sb, shifted, so), "v_out: shares memory with v_a");
  TensorView s_shifted = sb;
  s_shifted.data = static_cast<char*>(sb.data) + 4;
  CHECK_INVALID(MergeState(e, va, sa, vb, sb, vo, s_shifted), "s_out: shares memory with s_b");
  CHECK_INVALID(MergeState(e, va, sa, vb, sb, vo, TensorView::Contiguous(vo.data, f32, {7, 4})),
                "s_out: shares memory with v_out");
  // An output whose rows alias each other.
  TensorView broadcast = vo;
  broadcast.strides[0] = 0;
  CHECK_INVALID(MergeState(e, va, sa, vb, sb, broadcast, so), "v_out: elements overlap");
  // Two states of one stacked [seq, 2, heads, d] tensor interleave without sharing an element:
  // merging the second into the first in place is fine; merging into a shifted view is not.
  const TensorView stack_v = At(6, bf, {7, 2, 4, 128}), stack_s = At(7, f32, {7, 2, 4});
  auto state = [](TensorView t, int i) {
    TensorView r = t;
    r.ndim = t.ndim - 1;
    r.shape[1] = t.shape[2];
    r.strides[1] = t.strides[2];
    if (t.ndim == 4) {
      r.shape[2] = t.shape[3];
      r.strides[2] = t.strides[3];
    }
    r.data = static_cast<char*>(t.data) + i * t.strides[1] * DTypeBytes(t.dtype);
    return r;
  };
  const TensorView v0 = state(stack_v, 0), v1 = state(stack_v, 1);
  const TensorView s0 = state(stack_s, 0), s1 = state(stack_s, 1);
  CHECK_OK(MergeStateInPlace(e, v0, s0, v1, s1, TensorView{}));
  TensorView v0_half = v0;
  v0_half.data = static_cast<char*>(v0.data) + 128;  // overlaps v1's rows by half
  CHECK_INVALID(MergeStateInPlace(e, v0_half, s0, v1, s1, TensorView{}), "v: shares memory");
  // In place: v and s are the outputs; mask is checked.
  CHECK_OK(MergeStateInPlace(e, va, sa, vb, sb, At(8, DType::kBool, {7})));
  CHECK_INVALID(MergeStateInPlace(e, va, sa, vb, sb, At(8, DType::kI32, {7})), "mask: dtype i32");
  CHECK_INVALID(MergeStateInPlace(e, va, sa, vb, sb, At(8, DType::kU8, {6})), "mask: dim 0 is 6");
  CHECK_INVALID(MergeStateInPlace(e, va, sa, va, sb, TensorView{}),
                "v: shares memory with v_other");
}

TEST_CASE("merge_states checks the stacked states", "[cascade][validation]") {
  Engine& e = DryEngine();
  const TensorView v = At(0, DType::kF16, {5, 3, 8, 64}), s = At(1, f32, {5, 3, 8});
  const TensorView vo = At(2, DType::kF16, {5, 8, 64}), so = At(3, f32, {5, 8});
  CHECK_OK(MergeStates(e, v, s, vo, so));
  CHECK_OK(MergeStates(e, At(0, DType::kF16, {5, 0, 8, 64}), At(1, f32, {5, 0, 8}), vo, so));
  CHECK_INVALID(MergeStates(e, v, At(1, f32, {5, 4, 8}), vo, so), "s: dim 1 is 4");
  CHECK_INVALID(MergeStates(e, At(0, DType::kF16, {5, 8, 64}), s, vo, so), "v: expected 4");
  CHECK_INVALID(MergeStates(e, v, s, At(2, DType::kF16, {5, 8, 32}), so), "v: dim 3 is 64");
  CHECK_INVALID(MergeStates(e, v, s, vo, At(3, f32, {5, 9})), "s_out: dim 1 is 9");
  // The output may not be one of the stacked states.
  CHECK_INVALID(MergeStates(e, v, s, TensorView::Contiguous(v.data, DType::kF16, {5, 8, 64}), so),
                "v_out: shares memory with v");
}

}  // namespace
}  // namespace flashjit::test
