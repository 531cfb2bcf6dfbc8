// Bad arguments to the paged KV-cache ops: InvalidArgument naming the argument, before launch.
#include <flashjit/page.h>

#include "tests/unit/layer_validation_util.h"

namespace flashjit::test {
namespace {

const DType bf = DType::kBF16, i32 = DType::kI32;

TEST_CASE("append_paged_kv_cache rejects bad tensors and scales", "[page][validation]") {
  Engine& e = DryEngine();
  TensorView k = Fake(bf, {10, 8, 128}), v = Fake(bf, {10, 8, 128});
  TensorView bi = Fake(i32, {10}), pos = Fake(i32, {10});
  TensorView cache = Fake(bf, {32, 2, 16, 8, 128});
  TensorView idx = Fake(i32, {32}), indptr = Fake(i32, {3}), last = Fake(i32, {2});
  auto run = [&](const TensorView& kk, const TensorView& vv, const TensorView& b,
                 const TensorView& p, const TensorView& c, const TensorView& ip,
                 const TensorView& lp, KvLayout l = KvLayout::kNHD, float ks = 1.f) {
    return AppendPagedKvCache(e, kk, vv, b, p, c, idx, ip, lp, l, ks, 1.f);
  };
  CHECK_INVALID(run(k, Fake(bf, {10, 8, 64}), bi, pos, cache, indptr, last), "append_value: shape");
  CHECK_INVALID(run(k, Fake(DType::kF16, {10, 8, 128}), bi, pos, cache, indptr, last),
                "append_value: dtype");
  CHECK_INVALID(run(k, v, Fake(i32, {9}), pos, cache, indptr, last), "batch_indices: dim 0 is 9");
  CHECK_INVALID(run(k, v, bi, Fake(DType::kI64, {10}), cache, indptr, last), "positions: dtype");
  CHECK_INVALID(run(k, v, bi, pos, Fake(bf, {32, 16, 8, 128}), indptr, last), "paged_kv_cache");
  CHECK_INVALID(run(k, v, bi, pos, Fake(bf, {32, 2, 16, 4, 128}), indptr, last),
                "k_cache: dim 2 is 4");
  CHECK_INVALID(run(k, v, bi, pos, cache, indptr, last, KvLayout::kHND), "k_cache: dim 1 is 16");
  CHECK_INVALID(run(k, v, bi, pos, Fake(DType::kF16, {32, 2, 16, 8, 128}), indptr, last),
                "k_cache: dtype f16 must equal");
  CHECK_INVALID(run(k, v, bi, pos, Fake(bf, {32, 2, 16, 8, 64}), indptr, last), "k_cache: dim 3");
  CHECK_INVALID(run(k, v, bi, pos, cache, Fake(i32, {1}), Fake(i32, {0})), "kv_indptr");
  CHECK_INVALID(run(k, v, bi, pos, cache, indptr, Fake(i32, {3})), "kv_last_page_len: dim 0 is 3");
  CHECK_INVALID(run(k, v, bi, pos, cache, indptr, last, KvLayout::kNHD, 2.f),
                "scales apply to fp8 caches only");
  TensorView fp8 = Fake(DType::kF8E4M3, {32, 2, 16, 8, 128});
  CHECK_INVALID(run(k, v, bi, pos, fp8, indptr, last, KvLayout::kNHD, 0.f), "k_scale");
  CHECK_INVALID(run(k, v, bi, pos, fp8, indptr, last, KvLayout::kNHD, -1.f), "k_scale");
  TensorView ks = k;
  ks.strides[2] = 2;
  CHECK_INVALID(run(ks, v, bi, pos, cache, indptr, last), "append_key: innermost");

  TensorView ai = Fake(i32, {3}), sl = Fake(i32, {2});
  CHECK_INVALID(GetBatchIndicesPositions(e, Fake(i32, {1}), Fake(i32, {0}), bi, pos),
                "append_indptr");
  CHECK_INVALID(GetBatchIndicesPositions(e, ai, Fake(i32, {3}), bi, pos), "seq_lens: dim 0 is 3");
  CHECK_INVALID(GetBatchIndicesPositions(e, ai, sl, bi, Fake(i32, {9})), "positions: dim 0 is 9");
  CHECK_INVALID(GetBatchIndicesPositions(e, ai, sl, Fake(DType::kI64, {10}), pos),
                "batch_indices: dtype");
}

}  // namespace
}  // namespace flashjit::test
