// RoPE bandwidth. Bytes that must move: read q, k (+ positions, + cos/sin rows), write q, k.
// Q and K rotate over enough copies to exceed the L2.
#include <flashjit/rope.h>
#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/ops/rope/rope_spec.h"
#include "src/runtime/driver.h"
#include "tools/bench/bench_util.h"
#include "tools/bench/layer_sweeps.h"
#include "tools/bench/model_shapes.h"

using namespace flashjit;

namespace {

const DType kDt = DType::kBF16;
enum class Form { kPosIds, kPosIdsInplace, kInterleave, kLlama31, kIndptr, kCache };

void* UploadI32(const std::vector<int32_t>& v) {
  void* p = bench::DeviceAlloc(v.size() * 4 + 4);
  if (!bench::DryRun())
    (*runtime::Driver())->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(p), v.data(), v.size() * 4);
  return p;
}

// `force` (pos_ids forms only): time that kernel instead of the chooser's pick.
void Bench(Engine& engine, Form form, int64_t nnz, int64_t hq, int64_t hk, int64_t dim,
           const ops::RopeSpec* force = nullptr) {
  const size_t qb = nnz * hq * dim * 2, kb = nnz * hk * dim * 2;
  const int copies = qb + kb >= (64u << 20)
                         ? 1
                         : std::min<int>(64, static_cast<int>((160u << 20) / (qb + kb) + 1));
  std::vector<void*> q, k, qo, ko;
  for (int c = 0; c < copies; ++c) {
    for (auto* v : {&q, &qo}) v->push_back(bench::DeviceAlloc(qb));
    for (auto* v : {&k, &ko}) v->push_back(bench::DeviceAlloc(kb));
    bench::DeviceFillRandom16(q.back(), qb / 2, 1.f);
    bench::DeviceFillRandom16(k.back(), kb / 2, 1.f);
  }
  std::vector<int32_t> pos(nnz), indptr{0}, offsets;
  for (int64_t t = 0; t < nnz; ++t) pos[t] = static_cast<int32_t>((t * 7919) % 4096);
  const int64_t batch = std::max<int64_t>(1, std::min<int64_t>(nnz, 64));
  for (int64_t b = 0; b < batch; ++b) {
    indptr.push_back(static_cast<int32_t>(nnz * (b + 1) / batch));
    offsets.push_back(static_cast<int32_t>(b * 37));
  }
  void* dpos = UploadI32(pos);
  void* dindptr = UploadI32(indptr);
  void* doff = UploadI32(offsets);
  void* cache = bench::DeviceAlloc(4096 * dim * 4);
  bench::DeviceFillRandom16(cache, 4096 * dim * 2, 0.5f);  // finite float bits
  TensorView tpos = TensorView::Contiguous(dpos, DType::kI32, {nnz});
  TensorView tind = TensorView::Contiguous(dindptr, DType::kI32, {batch + 1});
  TensorView toff = TensorView::Contiguous(doff, DType::kI32, {batch});
  TensorView tcache = TensorView::Contiguous(cache, DType::kF32, {4096, dim});
  const char* names[] = {"rope_pos_ids", "rope_pos_ids_inplace", "rope_interleave",
                         "llama31_rope", "rope_indptr",          "rope_cos_sin_cache"};
  auto call = [&](int i) {
    const int c = i % copies;
    TensorView tq = TensorView::Contiguous(q[c], kDt, {nnz, hq, dim});
    TensorView tk = TensorView::Contiguous(k[c], kDt, {nnz, hk, dim});
    TensorView tqo = TensorView::Contiguous(qo[c], kDt, {nnz, hq, dim});
    TensorView tko = TensorView::Contiguous(ko[c], kDt, {nnz, hk, dim});
    Status s;
    if (force) {
      ops::RopeArgs a;
      a.mode = ops::RopeMode::kPosIds;
      a.q = tq;
      a.k = tk;
      a.q_out = form == Form::kPosIdsInplace ? tq : tqo;
      a.k_out = form == Form::kPosIdsInplace ? tk : tko;
      a.pos = tpos;
      a.interleave = form == Form::kInterleave;
      s = ops::RunRope(engine, a, nullptr, force);
      if (!s.ok()) throw std::runtime_error(s.ToString());
      return;
    }
    switch (form) {
      case Form::kPosIds:
        s = ApplyRopePosIds(engine, tq, tk, tqo, tko, tpos);
        break;
      case Form::kPosIdsInplace:
        s = ApplyRopePosIdsInplace(engine, tq, tk, tpos);
        break;
      case Form::kInterleave:
        s = ApplyRopePosIds(engine, tq, tk, tqo, tko, tpos, {-1, true});
        break;
      case Form::kLlama31:
        s = ApplyLlama31RopePosIds(engine, tq, tk, tqo, tko, tpos);
        break;
      case Form::kIndptr:
        s = ApplyRope(engine, tq, tk, tqo, tko, tind, toff);
        break;
      case Form::kCache:
        s = ApplyRopeWithCosSinCache(engine, tpos, tq, tk, tqo, tko, dim, tcache, true);
        break;
    }
    if (!s.ok()) throw std::runtime_error(s.ToString());
  };
  const bench::Timings t = bench::TimeCall(call);
  double moved = 2.0 * (qb + kb) + (form == Form::kIndptr ? 0 : nnz * 4.0);
  if (form == Form::kCache) moved += nnz * dim * 4.0;  // one cos/sin row per token
  std::string note = !force               ? std::string("default")
                     : force->kernel == 0 ? std::string("sweep warp kernel")
                     : force->kernel == 1
                         ? fmt::format("sweep tile w{} i{}", force->warps, force->items)
                         : fmt::format("sweep row w{} i{} slots {}{}{}", force->warps, force->items,
                                       force->slots, force->full_grid ? " full grid" : "",
                                       force->minb > 1 ? fmt::format(" mb{}", force->minb) : "");
  note += bench::TimingsNote(t, moved);
  bench::Report(names[static_cast<int>(form)],
                fmt::format("bf16 nnz {} h {}/{} d {}", nnz, hq, hk, dim), t.alone, moved, 0, note);
}

// --models: apply_rope_pos_ids (out of place) or the cos/sin-cache form, NeoX or GPT-J
// (interleaved), rotary_dim <= dim, the chooser's pick. Positions < 4096; the cache form reads one
// [rotary_dim] f32 row (cos | sin) per token.
// `force` (pos_ids only): that spec through ops::RunRope; `tag` leads the note.
void BenchModel(Engine& engine, bool cache_form, bool neox, int64_t nnz, int64_t hq, int64_t hk,
                int64_t dim, int64_t rot, const ops::RopeSpec* force = nullptr,
                const std::string& tag = "model") {
  const size_t qb = nnz * hq * dim * 2, kb = nnz * hk * dim * 2;
  const int copies = bench::ModelCopies(qb + kb);
  for (int c = 0; c < copies; ++c)
    for (int role : {0, 1, 2, 3}) bench::ModelBuffer(role, c, role % 2 ? kb : qb);
  static std::map<int64_t, void*> pos_by_nnz;
  void*& dpos = pos_by_nnz[nnz];
  if (!dpos) {
    std::vector<int32_t> pos(nnz);
    for (int64_t t = 0; t < nnz; ++t) pos[t] = static_cast<int32_t>((t * 7919) % 4096);
    dpos = UploadI32(pos);
  }
  void* cache = bench::ModelBuffer(9, 0, 4096 * rot * 4);  // finite float bits
  const TensorView tpos = TensorView::Contiguous(dpos, DType::kI32, {nnz});
  const TensorView tcache = TensorView::Contiguous(cache, DType::kF32, {4096, rot});
  auto call = [&](int i) {
    const int c = i % copies;
    TensorView tq = TensorView::Contiguous(bench::ModelBuffer(0, c, qb), kDt, {nnz, hq, dim});
    TensorView tk = TensorView::Contiguous(bench::ModelBuffer(1, c, kb), kDt, {nnz, hk, dim});
    TensorView tqo = TensorView::Contiguous(bench::ModelBuffer(2, c, qb), kDt, {nnz, hq, dim});
    TensorView tko = TensorView::Contiguous(bench::ModelBuffer(3, c, kb), kDt, {nnz, hk, dim});
    if (force) {
      ops::RopeArgs a;
      a.mode = ops::RopeMode::kPosIds;
      a.q = tq;
      a.k = tk;
      a.q_out = tqo;
      a.k_out = tko;
      a.pos = tpos;
      a.rotary_dim = rot;
      a.interleave = !neox;
      const Status s = ops::RunRope(engine, a, nullptr, force);
      if (!s.ok()) throw std::runtime_error(s.ToString());
      return;
    }
    Status s = cache_form ? ApplyRopeWithCosSinCache(engine, tpos, tq, tk, tqo, tko, dim, tcache,
                                                     neox, nullptr, 4095)
                          : ApplyRopePosIds(engine, tq, tk, tqo, tko, tpos, {rot, !neox});
    if (!s.ok()) throw std::runtime_error(s.ToString());
  };
  const bench::Timings t = bench::TimeCall(call);
  double moved = 2.0 * (qb + kb) + nnz * 4.0;
  if (cache_form) moved += nnz * rot * 4.0;
  bench::Report(cache_form ? "rope_cos_sin_cache" : "rope_pos_ids",
                fmt::format("bf16 nnz {} h {}/{} d {} rot {} {}", nnz, hq, hk, dim, rot,
                            neox ? "neox" : "gptj"),
                t.alone, moved, 0, tag + bench::TimingsNote(t, moved));
}

// --ab: session 13's A/B, interleaved (two rounds of: the previous launch forced, 8 slots, then
// the chooser's pick): partial rotary NeoX at 16k tokens (12 chunks per head), small batches.
void RunAb(Engine& engine) {
  struct Row {
    bool neox;
    int64_t nnz, hq, hk, dim, rot;
  };
  const std::vector<Row> list = {
      {true, 16384, 32, 8, 128, 64}, {true, 2048, 32, 8, 128, 64},   {false, 16384, 32, 8, 128, 64},
      {true, 1, 64, 8, 128, 128},    {true, 16, 64, 8, 128, 128},    {true, 256, 64, 8, 128, 128},
      {true, 1, 32, 32, 64, 64},     {true, 64, 32, 8, 128, 128},    {false, 64, 32, 8, 128, 128},
      {true, 256, 28, 4, 128, 128},  {true, 16384, 32, 8, 128, 128}, {true, 8192, 32, 8, 128, 128}};
  for (int rep = 0; rep < 2; ++rep)
    for (const Row& r : list) {
      ops::RopeSpec old;  // the previous default: row kernel, 4 warps, 8 slots, full grid
      old.kernel = 2;
      old.warps = 4;
      old.items = r.neox ? 2 : 4;
      old.slots = 8;
      old.full_grid = 1;
      BenchModel(engine, false, r.neox, r.nnz, r.hq, r.hk, r.dim, r.rot, &old,
                 fmt::format("ab{} forced slots 8", rep));
      BenchModel(engine, false, r.neox, r.nnz, r.hq, r.hk, r.dim, r.rot, nullptr,
                 fmt::format("ab{} default", rep));
    }
}

}  // namespace

int main(int argc, char** argv) {
  Engine& engine = bench::Setup(argc, argv);
  int64_t max_tokens = int64_t{1} << 40;  // --max-tokens N: only the model rows up to N tokens
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--max-tokens")) max_tokens = std::atoll(argv[i + 1]);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ab")) {
      RunAb(engine);
      return 0;
    }
  }
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--models")) {
      for (int64_t nnz : bench::ModelTokens())
        if (nnz <= max_tokens)
          for (auto [hq, hk, d, rot] : bench::ModelRope())
            for (bool cache_form : {false, true})
              for (bool neox : {true, false})
                BenchModel(engine, cache_form, neox, nnz, hq, hk, d, rot);
      return 0;
    }
  for (int64_t nnz : {1, 64, 16384}) Bench(engine, Form::kPosIds, nnz, 32, 8, 128);
  for (Form f :
       {Form::kPosIdsInplace, Form::kInterleave, Form::kLlama31, Form::kIndptr, Form::kCache})
    Bench(engine, f, 16384, 32, 8, 128);
  Bench(engine, Form::kCache, 64, 32, 8, 128);
  Bench(engine, Form::kPosIds, 8192, 32, 8, 128);
  // Sweep (same call): the warp kernel (the previous default), the tile kernel's best, and the
  // row kernel over slots / heads in flight / grid, pos_ids out of place and in place.
  const std::vector<ops::RopeSpec> sweep = bench::RopeSweep();  // tools/bench/layer_sweeps.h
  for (const ops::RopeSpec& s : sweep)
    for (Form f : {Form::kPosIds, Form::kPosIdsInplace}) Bench(engine, f, 16384, 32, 8, 128, &s);
  for (const ops::RopeSpec& s : sweep) Bench(engine, Form::kInterleave, 16384, 32, 8, 128, &s);
  for (const ops::RopeSpec& s : sweep) Bench(engine, Form::kPosIds, 64, 32, 8, 128, &s);
  Bench(engine, Form::kPosIds, 16384, 32, 8, 128);  // the chooser's pick again, after the sweep
  return 0;
}
