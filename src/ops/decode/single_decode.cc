// SingleDecode: one request, contiguous K/V. The KV is split uniformly over the SMs when a
// workspace allows it; the kernels derive each CTA's range from its block index (no plan). The
// split is merged by a thread-block cluster where BatchDecode's rule allows it (one launch),
// else by the merge kernel through the workspace.
#include <fmt/format.h>

#include <algorithm>

#include "src/engine/engine_impl.h"
#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/runtime/copy.h"

namespace flashjit {
namespace {

constexpr int64_t kMaxSingleChunks = 128;

size_t SlotBytes(int64_t num_qo_heads, int64_t head_dim) {
  return static_cast<size_t>(num_qo_heads) * (head_dim + 1) * sizeof(float);
}

}  // namespace

size_t SingleDecodeWorkspaceBytes(int64_t num_qo_heads, int64_t head_dim) {
  return kMaxSingleChunks * SlotBytes(num_qo_heads, head_dim) + 16;
}

Status SingleDecode(Engine& engine, const TensorView& q, const TensorView& k, const TensorView& v,
                    const TensorView& out, const TensorView& lse, KVLayout layout,
                    const DecodeOptions& options, void* workspace, size_t workspace_bytes,
                    void* stream) {
  using namespace ops;
  const auto kv_dtypes = {DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF8E5M2};
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(q, "q", 2, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(k, "k", 3, kv_dtypes));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(v, "v", 3, kv_dtypes));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(v, "v", k, "k"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(v, "v", k, "k"));
  for (int d = 0; d < 3; ++d)
    if (k.shape[d] > 1 && k.strides[d] != v.strides[d])
      return Status::InvalidArgument(
          fmt::format("v: strides must equal k's ({} vs {})", v.Describe(), k.Describe()));
  if (layout != KVLayout::kNHD && layout != KVLayout::kHND)
    return Status::InvalidArgument("layout: must be KVLayout::kNHD or KVLayout::kHND");
  const bool nhd = layout == KVLayout::kNHD;
  const int64_t kv_len = k.shape[nhd ? 0 : 1], num_kv_heads = k.shape[nhd ? 1 : 0];
  const int64_t head_dim = k.shape[2], num_qo_heads = q.shape[0];
  FLASHJIT_RETURN_IF_ERROR(CheckDecodeDTypes(q.dtype, k.dtype, head_dim));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(q, "q", 1, head_dim, "k's head_dim"));
  if (num_kv_heads <= 0 || num_qo_heads % num_kv_heads != 0)
    return Status::InvalidArgument(
        fmt::format("q: {} query heads is not a multiple of k's {} kv heads (layout {})",
                    num_qo_heads, num_kv_heads, nhd ? "NHD" : "HND"));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(out, "out", 2, {DType::kF16, DType::kBF16}));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(out, "out", q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameShape(out, "out", q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(out, "out"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(k, "k"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVAlignment(v, "v"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVStrides(k, "k"));
  FLASHJIT_RETURN_IF_ERROR(CheckKVStrides(v, "v"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(k, "k", q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(v, "v", q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(out, "out", q, "q"));
  FLASHJIT_RETURN_IF_ERROR(CheckLse(lse, {num_qo_heads}, q.device));
  FLASHJIT_RETURN_IF_ERROR(CheckDecodeOptions(options, num_qo_heads, q.device));
  if (kv_len > 0x7fffffff)
    return Status::InvalidArgument(fmt::format("k: kv_len {} exceeds 2^31 - 1", kv_len));
  if (workspace_bytes > 0 && !workspace)
    return Status::InvalidArgument("workspace: null with workspace_bytes > 0");
  if (num_qo_heads == 0) return Status::Ok();

  const DecodeSpec spec = DecodeSpecFor(q.dtype, k.dtype, static_cast<int>(head_dim), options);
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, q.device));
  FLASHJIT_ASSIGN_OR_RETURN(const int sms, runtime::MultiprocessorCount(engine, q.device));

  // The split: as many chunks as the workspace holds and the cost model wants; 2..8 (knob
  // FLASHJIT_DECODE_MAX_CLUSTER: up to 16) chunks of up to 2048 keys (16-bit KV at head_dim 128,
  // sm_90+, knob FLASHJIT_DECODE_CLUSTER) are merged by a thread-block cluster, as in BatchDecode's
  // plans.
  const int group = static_cast<int>(num_qo_heads / num_kv_heads);
  const int q_tiles = (group + attention::kDecodeQTile - 1) / attention::kDecodeQTile;
  const int64_t max_slots = std::min<int64_t>(
      kMaxSingleChunks,
      workspace_bytes < 16 ? 0 : (workspace_bytes - 16) / SlotBytes(num_qo_heads, head_dim));
  DecodeScheduleLimits limits;
  limits.ctas_per_item = static_cast<int>(num_kv_heads) * q_tiles;
  limits.slots =
      sms * DecodeCtasPerSm(static_cast<int>(head_dim), DTypeBytes(k.dtype), options.rope);
  limits.max_items = static_cast<int>(max_slots);
  if (max_slots >= 2)
    limits.max_cluster =
        DecodeMaxCluster(engine, q.device, static_cast<int>(head_dim), DTypeBytes(k.dtype));
  const SingleDecodeSplit split = ChooseSingleDecodeSplit(kv_len, limits);
  const int32_t chunk = split.chunk;
  const int n_chunks = split.chunks;
  const bool pdl = DecodePdl(engine, q.device, chunk);

  attention::DecodeParams p{};
  p.q = q.data;
  p.k = k.data;
  p.v = v.data;
  p.out = out.data;
  p.lse = Present(lse) ? static_cast<float*>(lse.data) : nullptr;
  p.q_stride_h = q.strides[0];
  p.o_stride_h = out.strides[0];
  p.kv_token_stride = k.strides[nhd ? 0 : 1];
  p.kv_head_stride = k.strides[nhd ? 1 : 0];
  attention::SetDecodePageSize(p, 1u << 31);
  p.num_qo_heads = static_cast<int32_t>(num_qo_heads);
  p.num_kv_heads = static_cast<int32_t>(num_kv_heads);
  p.group_size = group;
  p.q_tiles = q_tiles;
  p.single_kv_len = static_cast<int32_t>(kv_len);
  p.single_chunk = chunk;
  FillOptionParams(options, static_cast<int>(head_dim), &p);
  if (split.cluster > 1) {
    // One launch: the n_chunks CTAs of each head tile form a cluster (blockIdx.x = head tile *
    // n_chunks + chunk, see DecodeParams::cluster), which merges them in shared memory.
    p.cluster = split.cluster;
    return LaunchDecode(*kernel, spec, p, n_chunks, attention::DecodeMergeParams{}, 0,
                        static_cast<CUstream>(stream), 0, pdl, false);
  }
  const size_t lse_bytes = (static_cast<size_t>(n_chunks) * num_qo_heads * 4 + 15) / 16 * 16;
  p.partial_lse = static_cast<float*>(workspace);
  p.partial_o = reinterpret_cast<float*>(static_cast<char*>(workspace) + lse_bytes);

  attention::DecodeMergeParams mp{};
  mp.partial_o = p.partial_o;
  mp.partial_lse = p.partial_lse;
  mp.out = p.out;
  mp.lse = p.lse;
  mp.sinks = p.sinks;
  mp.o_stride_h = p.o_stride_h;
  mp.num_qo_heads = p.num_qo_heads;
  mp.single_partials = n_chunks;
  return LaunchDecode(*kernel, spec, p, n_chunks, mp, n_chunks > 1 ? 1 : 0,
                      static_cast<CUstream>(stream), 0, pdl, DecodePdl(engine, q.device, 0));
}

}  // namespace flashjit
