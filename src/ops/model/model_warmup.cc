// WarmupModel: one decode step of a transformer layer, in dry run, over fake device pointers.
// The op calls are the same a server makes, so the variants built are exactly the ones its
// launches will ask for.
#include <flashjit/activation.h>
#include <flashjit/decode.h>
#include <flashjit/norm.h>
#include <flashjit/page.h>
#include <flashjit/rope.h>
#include <flashjit/sampling.h>
#include <flashjit/warmup.h>
#include <fmt/format.h>

#include <vector>

namespace flashjit {
namespace {

// Distinct, 256-byte aligned addresses that are never dereferenced (dry run).
class FakeMemory {
 public:
  void* Next() {
    next_ += uintptr_t{1} << 32;
    return reinterpret_cast<void*>(next_);
  }
  TensorView Tensor(DType dtype, std::initializer_list<int64_t> shape) {
    return TensorView::Contiguous(Next(), dtype, shape);
  }

 private:
  uintptr_t next_ = uintptr_t{1} << 44;
};

Status Ctx(const Status& s, const std::string& what) { return s.WithContext(what); }

Status WarmupLayerOps(Engine& e, const ModelShape& m, FakeMemory& mem, int64_t tokens) {
  const DType dt = m.dtype;
  const int64_t hq = m.num_attention_heads, hkv = m.num_key_value_heads, d = m.head_dim;
  const std::string at = fmt::format(" ({} tokens)", tokens);
  TensorView x = mem.Tensor(dt, {tokens, m.hidden_size}), w = mem.Tensor(dt, {m.hidden_size});
  TensorView res = mem.Tensor(dt, {tokens, m.hidden_size});
  FLASHJIT_RETURN_IF_ERROR(Ctx(RmsNorm(e, x, w, x, 1e-5f), "rmsnorm" + at));
  FLASHJIT_RETURN_IF_ERROR(Ctx(FusedAddRmsNorm(e, x, res, w, 1e-5f), "fused_add_rmsnorm" + at));

  TensorView q = mem.Tensor(dt, {tokens, hq, d}), k = mem.Tensor(dt, {tokens, hkv, d});
  TensorView pos = mem.Tensor(DType::kI32, {tokens});
  if (m.llama31_rope) {
    FLASHJIT_RETURN_IF_ERROR(
        Ctx(ApplyLlama31RopePosIdsInplace(e, q, k, pos), "apply_llama31_rope_pos_ids" + at));
  } else {
    FLASHJIT_RETURN_IF_ERROR(Ctx(ApplyRopePosIdsInplace(e, q, k, pos), "apply_rope_pos_ids" + at));
  }

  TensorView gate_up = mem.Tensor(dt, {tokens, 2 * m.intermediate_size});
  TensorView act = mem.Tensor(dt, {tokens, m.intermediate_size});
  FLASHJIT_RETURN_IF_ERROR(Ctx(SiluAndMul(e, gate_up, act), "silu_and_mul" + at));
  return Status::Ok();
}

Status WarmupDecode(Engine& e, const ModelShape& m, FakeMemory& mem, int32_t batch) {
  const std::string at = fmt::format(" (batch {})", batch);
  const int64_t hq = m.num_attention_heads, hkv = m.num_key_value_heads, d = m.head_dim;
  const int32_t page = m.page_size;
  // KV append of one new token per request into a paged cache.
  const int64_t pages_per_req = 4096 / page, num_pages = batch * pages_per_req;
  TensorView cache = mem.Tensor(m.kv_dtype, {num_pages, 2, page, hkv, d});
  TensorView new_k = mem.Tensor(m.dtype, {batch, hkv, d}),
             new_v = mem.Tensor(m.dtype, {batch, hkv, d});
  TensorView indices = mem.Tensor(DType::kI32, {num_pages});
  TensorView indptr = mem.Tensor(DType::kI32, {batch + 1});
  TensorView last = mem.Tensor(DType::kI32, {batch});
  TensorView bidx = mem.Tensor(DType::kI32, {batch}), bpos = mem.Tensor(DType::kI32, {batch});
  FLASHJIT_RETURN_IF_ERROR(
      Ctx(AppendPagedKvCache(e, new_k, new_v, bidx, bpos, cache, indices, indptr, last),
          "append_paged_kv_cache" + at));

  BatchDecodeConfig cfg;
  cfg.num_qo_heads = static_cast<int32_t>(hq);
  cfg.num_kv_heads = static_cast<int32_t>(hkv);
  cfg.head_dim = static_cast<int32_t>(d);
  cfg.page_size = page;
  cfg.q_dtype = m.dtype;
  cfg.kv_dtype = m.kv_dtype;
  cfg.max_batch_size = batch;
  FLASHJIT_ASSIGN_OR_RETURN(auto wrapper, BatchDecode::Create(e, cfg));
  TensorView workspace = mem.Tensor(DType::kU8, {static_cast<int64_t>(wrapper->WorkspaceBytes())});
  TensorView k_cache, v_cache;
  FLASHJIT_RETURN_IF_ERROR(SplitKVCache(cache, &k_cache, &v_cache));
  TensorView q = mem.Tensor(m.dtype, {batch, hq, d}), out = mem.Tensor(m.dtype, {batch, hq, d});
  // Short and long contexts: the plan picks its split from the lengths.
  for (int64_t len : {int64_t{page}, int64_t{1024}, pages_per_req * page}) {
    const int32_t req_pages = static_cast<int32_t>((len + page - 1) / page);
    std::vector<int32_t> h_indptr(batch + 1),
        h_last(batch, static_cast<int32_t>(len - (req_pages - 1) * page));
    for (int32_t b = 0; b <= batch; ++b) h_indptr[b] = b * req_pages;
    FLASHJIT_RETURN_IF_ERROR(Ctx(wrapper->Plan(h_indptr.data(), h_last.data(), batch, {},
                                               workspace.data, wrapper->WorkspaceBytes()),
                                 "batch decode plan" + at));
    FLASHJIT_RETURN_IF_ERROR(
        Ctx(wrapper->Run(q, k_cache, v_cache, indices, out), "batch decode run" + at));
  }

  if (batch == 1) {  // one request: the single-decode path, split over the SMs
    const int64_t len = pages_per_req * page;
    TensorView k1 = mem.Tensor(m.kv_dtype, {len, hkv, d}),
               v1 = mem.Tensor(m.kv_dtype, {len, hkv, d});
    TensorView q1 = mem.Tensor(m.dtype, {hq, d}), o1 = mem.Tensor(m.dtype, {hq, d});
    const size_t ws = SingleDecodeWorkspaceBytes(hq, d);
    FLASHJIT_RETURN_IF_ERROR(Ctx(
        SingleDecode(e, q1, k1, v1, o1, {}, KVLayout::kNHD, {}, mem.Next(), ws), "single decode"));
  }

  // Sampling over the vocabulary.
  TensorView probs = mem.Tensor(DType::kF32, {batch, m.vocab_size});
  TensorView samples = mem.Tensor(DType::kI32, {batch});
  FLASHJIT_RETURN_IF_ERROR(Ctx(Softmax(e, probs, probs), "softmax" + at));
  FLASHJIT_RETURN_IF_ERROR(Ctx(SamplingFromProbs(e, probs, samples), "sampling_from_probs" + at));
  FLASHJIT_RETURN_IF_ERROR(Ctx(TopPSamplingFromProbs(e, probs, samples, 0.9f), "top_p" + at));
  FLASHJIT_RETURN_IF_ERROR(Ctx(TopKSamplingFromProbs(e, probs, samples, 50), "top_k" + at));
  FLASHJIT_RETURN_IF_ERROR(Ctx(MinPSamplingFromProbs(e, probs, samples, 0.1f), "min_p" + at));
  FLASHJIT_RETURN_IF_ERROR(
      Ctx(TopKTopPSamplingFromProbs(e, probs, samples, 50, {}, 0.9f, {}), "top_k_top_p" + at));
  return Status::Ok();
}

}  // namespace

Status WarmupModel(Engine& engine, const ModelShape& m) {
  if (!engine.config().dry_run)
    return Status::InvalidArgument(
        "WarmupModel: the engine must be created with dry_run (and an arch): warm-up calls use "
        "fake device pointers");
  FakeMemory mem;
  for (int64_t tokens : m.token_counts)
    FLASHJIT_RETURN_IF_ERROR(WarmupLayerOps(engine, m, mem, tokens).WithContext(m.name));
  for (int32_t batch : m.batch_sizes)
    FLASHJIT_RETURN_IF_ERROR(WarmupDecode(engine, m, mem, batch).WithContext(m.name));
  return Status::Ok();
}

}  // namespace flashjit
