// MergeState, MergeStateInPlace, MergeStates: validate, choose the variant, launch.
#include <flashjit/cascade.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "cascade/merge_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/ops/cascade/merge_state_spec.h"

namespace flashjit {
namespace {

using ops::CheckDim;
using ops::CheckDistinctElements;
using ops::CheckInnerContiguous;
using ops::CheckNoOverlap;
using ops::CheckSameDevice;
using ops::CheckSameDType;
using ops::CheckTensor;

constexpr std::initializer_list<DType> kValueTypes = {DType::kF16, DType::kBF16, DType::kF32};

// Vectors per state each lane loads: the per-state work (index arithmetic, the log-sum-exp, the
// weights) is paid once for all of them, which is what the kernel is bound by at one vector
// (docs/perf/cascade.md, session 7: bf16 seq 16384 x 32 x 128, 143.4 -> 122.0 us at 4). With
// four states per batch, 4 vectors cost too many registers (213): 2 there. Benchmark and test
// knob: FLASHJIT_MERGE_CHUNKS = 1, 2 or 4 overrides.
int Chunks(int64_t states) {
  static const int kOverride = [] {
    const char* v = std::getenv("FLASHJIT_MERGE_CHUNKS");
    return v && (v[0] == '1' || v[0] == '2' || v[0] == '4') && v[1] == 0 ? v[0] - '0' : 0;
  }();
  if (kOverride > 0) return kOverride;
  return states <= 2 ? 4 : 2;
}

// One source of states: `v` [seq, (states,) heads, head_dim], `s` [seq, (states,) heads].
struct Source {
  const TensorView* v;
  const TensorView* s;
  const char* v_name;
  const char* s_name;
  bool stacked;  // has the states dimension
};

// Checks a source against the geometry of the first one (seq, heads, head_dim, dtype, device).
Status CheckSource(const Source& src, const TensorView& like, const char* like_name) {
  const int vd = src.stacked ? 4 : 3;
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(*src.v, src.v_name, vd, kValueTypes));
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(*src.s, src.s_name, vd - 1, {DType::kF32}));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(*src.v, src.v_name));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDType(*src.v, src.v_name, like, like_name));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(*src.v, src.v_name, like, like_name));
  FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(*src.s, src.s_name, like, like_name));
  const int h = src.stacked ? 2 : 1;
  FLASHJIT_RETURN_IF_ERROR(CheckDim(*src.v, src.v_name, 0, like.shape[0], "seq_len"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(*src.v, src.v_name, h, like.shape[1], "num_heads"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(*src.v, src.v_name, h + 1, like.shape[2], "head_dim"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(*src.s, src.s_name, 0, like.shape[0], "seq_len"));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(*src.s, src.s_name, h, like.shape[1], "num_heads"));
  if (src.stacked)
    FLASHJIT_RETURN_IF_ERROR(CheckDim(*src.s, src.s_name, 1, src.v->shape[1], "v's num_states"));
  return Status::Ok();
}

cascade::MergeSource Describe(const Source& src) {
  cascade::MergeSource m{};
  m.v = src.v->data;
  m.s = static_cast<const float*>(src.s->data);
  const int h = src.stacked ? 2 : 1;
  m.v_seq = src.v->strides[0];
  m.v_head = src.v->strides[h];
  m.s_seq = src.s->strides[0];
  m.s_head = src.s->strides[h];
  m.v_state = src.stacked ? src.v->strides[1] : 0;
  m.s_state = src.stacked ? src.s->strides[1] : 0;
  m.count = static_cast<int32_t>(src.stacked ? src.v->shape[1] : 1);
  return m;
}

// The common path: `sources` (one or two) merged into (v_out, s_out) for the rows mask keeps.
// `in_place`: v_out / s_out are the first source's own tensors.
Status Run(Engine& engine, std::initializer_list<Source> sources, const TensorView& v_out,
           const TensorView& s_out, const TensorView& mask, bool in_place, void* stream) {
  const TensorView& like = v_out;
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(v_out, in_place ? "v" : "v_out", 3, kValueTypes));
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(v_out, in_place ? "v" : "v_out"));
  if (v_out.shape[2] < 1)
    return Status::InvalidArgument(
        fmt::format("{}: head_dim must be >= 1 ({})", in_place ? "v" : "v_out", v_out.Describe()));
  for (const Source& src : sources)
    FLASHJIT_RETURN_IF_ERROR(CheckSource(src, like, in_place ? "v" : "v_out"));
  const bool has_s_out = s_out.data != nullptr;
  if (has_s_out) {
    const char* name = in_place ? "s" : "s_out";
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(s_out, name, 2, {DType::kF32}));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(s_out, name, 0, like.shape[0], "seq_len"));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(s_out, name, 1, like.shape[1], "num_heads"));
    FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(s_out, name, like, "v_out"));
    FLASHJIT_RETURN_IF_ERROR(CheckDistinctElements(s_out, name));
    FLASHJIT_RETURN_IF_ERROR(CheckNoOverlap(s_out, name, v_out, "v_out"));
  }
  const bool has_mask = mask.data != nullptr;
  if (has_mask) {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(mask, "mask", 1, {DType::kBool, DType::kU8}));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(mask, "mask", 0, like.shape[0], "seq_len"));
    FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(mask, "mask", like, "v"));
    if (mask.shape[0] > 1 && mask.strides[0] != 1)
      return Status::InvalidArgument(fmt::format("mask: must be contiguous ({})", mask.Describe()));
  }
  FLASHJIT_RETURN_IF_ERROR(CheckDistinctElements(v_out, in_place ? "v" : "v_out"));
  // An output may be a (non-stacked) input itself, read and written element by element by the
  // same thread; it shares no element with anything else.
  bool first = true;
  for (const Source& src : sources) {
    const bool own = in_place && first;
    first = false;
    if (own) continue;
    const bool may_alias = !src.stacked && !in_place;
    FLASHJIT_RETURN_IF_ERROR(
        CheckNoOverlap(v_out, in_place ? "v" : "v_out", *src.v, src.v_name, may_alias));
    FLASHJIT_RETURN_IF_ERROR(CheckNoOverlap(v_out, in_place ? "v" : "v_out", *src.s, src.s_name));
    if (has_s_out) {
      FLASHJIT_RETURN_IF_ERROR(
          CheckNoOverlap(s_out, in_place ? "s" : "s_out", *src.s, src.s_name, may_alias));
      FLASHJIT_RETURN_IF_ERROR(CheckNoOverlap(s_out, in_place ? "s" : "s_out", *src.v, src.v_name));
    }
  }
  if (has_mask) {
    FLASHJIT_RETURN_IF_ERROR(CheckNoOverlap(v_out, "v", mask, "mask"));
    if (has_s_out) FLASHJIT_RETURN_IF_ERROR(CheckNoOverlap(s_out, "s", mask, "mask"));
  }

  const int64_t seq = like.shape[0], heads = like.shape[1], head_dim = like.shape[2];
  int64_t states = 0;
  for (const Source& src : sources) states += src.stacked ? src.v->shape[1] : 1;
  if (heads > INT32_MAX || head_dim > INT32_MAX || states > INT32_MAX)
    return Status::InvalidArgument(
        fmt::format("v: num_heads {}, head_dim {} and num_states {} must each fit in 32 bits",
                    heads, head_dim, states));
  if (seq == 0 || heads == 0) return Status::Ok();

  ops::MergeStateSpec spec;
  spec.dtype = like.dtype;
  const int elem = DTypeBytes(like.dtype);
  const void* p0 = sources.begin()->v->data;
  const void* p1 = sources.size() > 1 ? (sources.begin() + 1)->v->data : p0;
  const TensorView& v0 = *sources.begin()->v;
  const TensorView& v1 = *(sources.begin() + (sources.size() > 1 ? 1 : 0))->v;
  spec.vec = static_cast<uint8_t>(ops::VectorWidth(
      elem, head_dim, {v_out.data, p0, p1},
      {v_out.strides[0], v_out.strides[1], v0.strides[0], v0.strides[1], v0.strides[v0.ndim - 2],
       v1.strides[0], v1.strides[1], v1.strides[v1.ndim - 2]}));
  const int64_t accesses = (head_dim + spec.vec - 1) / spec.vec;
  // A row's lanes: a power of two, up to a warp, enough for its accesses at `chunks` each. More
  // than one chunk only where the row is a whole number of lanes * vec * chunks (the kernel
  // needs no per-chunk bounds check then).
  auto lanes_for = [&](int chunks) {
    int lanes = 1;
    while (lanes < 32 && lanes * chunks < accesses) lanes *= 2;
    return lanes;
  };
  int chunks = Chunks(states);
  while (chunks > 1 &&
         (head_dim != accesses * spec.vec || accesses % (int64_t{lanes_for(chunks)} * chunks) != 0))
    chunks /= 2;
  spec.chunks = static_cast<uint8_t>(chunks);
  spec.lanes = static_cast<uint8_t>(lanes_for(chunks));
  // Two states (merge_state, in place): both rows in flight with fewer registers (62 against 76
  // at bf16, head_dim 128: four 256-thread blocks per SM instead of three).
  spec.batch = states <= 2 ? 2 : 4;
  spec.threads = 256;
  const int64_t rows = seq * heads, per_block = spec.threads / spec.lanes;
  if (rows > INT32_MAX)
    return Status::InvalidArgument(
        fmt::format("v: {} (seq, head) rows are too many for one launch (at most 2^31 - 1)", rows));
  const int64_t blocks = (rows + per_block - 1) / per_block;
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, like.device));

  cascade::MergeParams p{};
  int k = 0;
  for (const Source& src : sources) p.src[k++] = Describe(src);
  p.v_out = v_out.data;
  p.s_out = has_s_out ? static_cast<float*>(s_out.data) : nullptr;
  p.mask = has_mask ? static_cast<const uint8_t*>(mask.data) : nullptr;
  p.out_v_seq = v_out.strides[0];
  p.out_v_head = v_out.strides[1];
  p.out_s_seq = has_s_out ? s_out.strides[0] : 0;
  p.out_s_head = has_s_out ? s_out.strides[1] : 0;
  p.rows = rows;
  p.heads = MakeFastDivisor(static_cast<uint32_t>(heads));
  p.head_dim = static_cast<int32_t>(head_dim);
  runtime::LaunchConfig cfg;
  cfg.grid_x = static_cast<uint32_t>(blocks);
  cfg.block_x = spec.threads;
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(stream));
}

}  // namespace

Status MergeState(Engine& engine, const TensorView& v_a, const TensorView& s_a,
                  const TensorView& v_b, const TensorView& s_b, const TensorView& v_out,
                  const TensorView& s_out, void* stream) {
  return Run(engine,
             {Source{&v_a, &s_a, "v_a", "s_a", false}, Source{&v_b, &s_b, "v_b", "s_b", false}},
             v_out, s_out, TensorView{}, /*in_place=*/false, stream);
}

Status MergeStateInPlace(Engine& engine, const TensorView& v, const TensorView& s,
                         const TensorView& v_other, const TensorView& s_other,
                         const TensorView& mask, void* stream) {
  return Run(
      engine,
      {Source{&v, &s, "v", "s", false}, Source{&v_other, &s_other, "v_other", "s_other", false}}, v,
      s, mask, /*in_place=*/true, stream);
}

Status MergeStates(Engine& engine, const TensorView& v, const TensorView& s,
                   const TensorView& v_out, const TensorView& s_out, void* stream) {
  return Run(engine, {Source{&v, &s, "v", "s", true}}, v_out, s_out, TensorView{},
             /*in_place=*/false, stream);
}

}  // namespace flashjit
