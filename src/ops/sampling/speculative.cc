// ChainSpeculativeSampling: validate, choose the variant, launch one block per request.
#include <fmt/format.h>

#include "sampling/sampling_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/ops/sampling/sampling_run.h"

namespace flashjit {

Status ChainSpeculativeSampling(Engine& engine, const TensorView& draft_probs,
                                const TensorView& draft_token_ids, const TensorView& target_probs,
                                const TensorView& output_token_ids,
                                const TensorView& accepted_token_num,
                                const TensorView& emitted_draft_token_num, const SamplingRng& rng,
                                void* stream) {
  using namespace ops;
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(draft_probs, "draft_probs", 3, {DType::kF32}));
  const int64_t batch = draft_probs.shape[0], n = draft_probs.shape[1],
                vocab = draft_probs.shape[2];
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(draft_probs, "draft_probs"));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(draft_token_ids, "draft_token_ids", 2, {DType::kI32}));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(draft_token_ids, "draft_token_ids", 0, batch, "batch"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(draft_token_ids, "draft_token_ids", 1, n, "draft length"));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(draft_token_ids, "draft_token_ids"));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(target_probs, "target_probs", 3, {DType::kF32}));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(target_probs, "target_probs", 0, batch, "batch"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(target_probs, "target_probs", 1, n + 1, "draft length + 1"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(target_probs, "target_probs", 2, vocab, "vocabulary size"));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(target_probs, "target_probs"));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(output_token_ids, "output_token_ids", 2, {DType::kI32}));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(output_token_ids, "output_token_ids", 0, batch, "batch"));
  FLASHJIT_RETURN_IF_ERROR(
      CheckDim(output_token_ids, "output_token_ids", 1, n + 1, "draft length + 1"));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(output_token_ids, "output_token_ids"));
  for (auto [t, name] : {std::pair{&accepted_token_num, "accepted_token_num"},
                         std::pair{&emitted_draft_token_num, "emitted_draft_token_num"}}) {
    if (!t->data) continue;
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(*t, name, 1, {DType::kI32}));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(*t, name, 0, batch, "batch"));
    FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(*t, name, draft_probs, "draft_probs"));
  }
  for (auto [t, name] :
       {std::pair{&draft_token_ids, "draft_token_ids"}, std::pair{&target_probs, "target_probs"},
        std::pair{&output_token_ids, "output_token_ids"}})
    FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(*t, name, draft_probs, "draft_probs"));
  if (batch > 0x7fffffff || vocab > (int64_t{1} << 20))
    return Status::InvalidArgument(fmt::format(
        "draft_probs: {} rows of {} tokens; at most 2^31-1 rows and 2^20 tokens", batch, vocab));
  if (vocab < 1 && batch > 0) return Status::InvalidArgument("draft_probs: vocabulary size 0");
  if (batch == 0) return Status::Ok();

  const int vec = std::min(4, VectorWidth(4, vocab, {draft_probs.data, target_probs.data}, {}));
  SpeculativeSpec spec;
  spec.vec = static_cast<uint8_t>(vec);
  // Two rows live per access: past 512 threads the registers would spill.
  spec.threads = static_cast<uint16_t>(std::min(512, ChooseSamplingThreads(vocab, vec, batch)));
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel,
                            KernelFor(engine, spec, draft_probs.device));
  sampling::SpeculativeParams p{};
  p.draft_probs = static_cast<const float*>(draft_probs.data);
  p.draft_ids = static_cast<const int32_t*>(draft_token_ids.data);
  p.target_probs = static_cast<const float*>(target_probs.data);
  p.out_ids = static_cast<int32_t*>(output_token_ids.data);
  p.accepted = static_cast<int32_t*>(accepted_token_num.data);
  p.emitted = static_cast<int32_t*>(emitted_draft_token_num.data);
  p.seed_ptr = static_cast<const uint64_t*>(rng.seed_device);
  p.offset_ptr = static_cast<const uint64_t*>(rng.offset_device);
  p.batch = batch;
  p.num_draft = n;
  p.vocab = vocab;
  p.seed = rng.seed;
  p.offset = rng.offset;
  runtime::LaunchConfig cfg;
  cfg.grid_x = static_cast<uint32_t>(batch);
  cfg.block_x = spec.threads;
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace flashjit
