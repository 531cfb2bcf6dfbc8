// The batch decode GPU tests' cases and their check (decode_batch_util.h).
#include "tests/gpu/decode_batch_util.h"

#include <algorithm>
#include <numeric>

#include "src/ops/decode/decode_common.h"
#include "src/ops/decode/decode_schedule.h"
#include "src/ops/decode/decode_spec.h"
#include "src/runtime/copy.h"
#include "src/runtime/driver.h"

namespace flashjit::test {

PagedCache BuildCache(const BatchCase& c, std::mt19937& rng) {
  PagedCache pc;
  const int ps = c.page_size, hkv = c.num_kv_heads, d = c.head_dim;
  const int b = static_cast<int>(c.lens.size());
  pc.indptr.assign(1, 0);
  for (int len : c.lens) {
    const int pages = (len + ps - 1) / ps;
    pc.indptr.push_back(pc.indptr.back() + pages);
    pc.last_len.push_back(pages == 0 ? 0 : len - (pages - 1) * ps);
  }
  pc.num_pages = pc.indptr[b] + 3;  // a few pages nobody uses
  pc.page_ids.resize(pc.num_pages);
  std::iota(pc.page_ids.begin(), pc.page_ids.end(), 0);
  std::shuffle(pc.page_ids.begin(), pc.page_ids.end(), rng);
  pc.page_ids.resize(pc.indptr[b]);
  const int64_t page_elems = int64_t(ps) * hkv * d, n = pc.num_pages * page_elems;
  // Values in NHD order; the device copy is permuted for HND and interleaved for `combined`.
  std::vector<float> k = RandomNormal(n, rng, c.huge_negative ? 0.2f : c.kv_std),
                     v = RandomNormal(n, rng, c.kv_std);
  if (c.huge_negative)
    for (int64_t i = 0; i < n / d; ++i) k[i * d] = -512.f;
  auto index = [&](int64_t page, int t, int h, int i) -> int64_t {  // device element offset
    const int64_t in_page =
        c.layout == KVLayout::kNHD ? (int64_t(t) * hkv + h) * d + i : (int64_t(h) * ps + t) * d + i;
    return c.combined ? page * 2 * page_elems + in_page : page * page_elems + in_page;
  };
  const int64_t dev_elems = c.combined ? 2 * n : n;
  std::vector<float> dk(dev_elems, 0.f), dv(dev_elems, 0.f);
  for (int64_t p = 0; p < pc.num_pages; ++p)
    for (int t = 0; t < ps; ++t)
      for (int h = 0; h < hkv; ++h)
        for (int i = 0; i < d; ++i) {
          const int64_t src = ((p * ps + t) * hkv + h) * d + i, dst = index(p, t, h, i);
          dk[dst] = k[src];
          if (c.combined)
            dk[dst + page_elems] = v[src];
          else
            dv[dst] = v[src];
        }
  std::vector<double> rk, rv;
  pc.k = UploadAs(c.kv_dtype, dk, &rk);
  if (!c.combined) pc.v = UploadAs(c.kv_dtype, dv, &rv);
  pc.host_k.resize(n);
  pc.host_v.resize(n);
  for (int64_t p = 0; p < pc.num_pages; ++p)
    for (int t = 0; t < ps; ++t)
      for (int h = 0; h < hkv; ++h)
        for (int i = 0; i < d; ++i) {
          const int64_t dst = ((p * ps + t) * hkv + h) * d + i, src = index(p, t, h, i);
          pc.host_k[dst] = rk[src];
          pc.host_v[dst] = c.combined ? rk[src + page_elems] : rv[src];
        }
  pc.indices = DeviceBuffer(std::max<size_t>(4, pc.page_ids.size() * 4));
  if (!pc.page_ids.empty()) pc.indices.Upload(pc.page_ids.data(), pc.page_ids.size() * 4);
  return pc;
}

void CacheViews(const BatchCase& c, const PagedCache& pc, TensorView* k, TensorView* v) {
  const int64_t ps = c.page_size, hkv = c.num_kv_heads, d = c.head_dim;
  const bool nhd = c.layout == KVLayout::kNHD;
  if (c.combined) {
    TensorView all = TensorView::Contiguous(pc.k.data(), c.kv_dtype,
                                            {pc.num_pages, 2, nhd ? ps : hkv, nhd ? hkv : ps, d});
    REQUIRE(SplitKVCache(all, k, v).ok());
  } else {
    *k = TensorView::Contiguous(pc.k.data(), c.kv_dtype,
                                {pc.num_pages, nhd ? ps : hkv, nhd ? hkv : ps, d});
    *v = TensorView::Contiguous(pc.v.data(), c.kv_dtype,
                                {pc.num_pages, nhd ? ps : hkv, nhd ? hkv : ps, d});
  }
}

// The reference output [B, Hq, D] and lse [B, Hq] of a batch.
void Reference(const BatchCase& c, const PagedCache& pc, const std::vector<double>& q,
               const std::vector<double>* sinks, const DecodeOptions& opts,
               std::vector<double>* out, std::vector<double>* lse) {
  const int hq = c.num_qo_heads, hkv = c.num_kv_heads, d = c.head_dim, ps = c.page_size;
  const int b = static_cast<int>(c.lens.size());
  out->assign(int64_t(b) * hq * d, 0);
  lse->assign(int64_t(b) * hq, 0);
  const ref::DecodeRefOptions ro = RefOptions(opts, sinks);
  for (int r = 0; r < b; ++r) {
    const int len = c.lens[r];
    std::vector<double> k(int64_t(len) * hkv * d), v(k.size());
    for (int j = 0; j < len; ++j) {
      const int64_t page = pc.page_ids[pc.indptr[r] + j / ps];
      const int64_t src = (page * ps + j % ps) * hkv * d;
      std::copy_n(pc.host_k.begin() + src, hkv * d, k.begin() + int64_t(j) * hkv * d);
      std::copy_n(pc.host_v.begin() + src, hkv * d, v.begin() + int64_t(j) * hkv * d);
    }
    ref::DecodeAttention(q.data() + int64_t(r) * hq * d, k.data(), v.data(), len, hq, hkv, d, ro,
                         out->data() + int64_t(r) * hq * d, lse->data() + int64_t(r) * hq);
  }
}

std::string Describe(const BatchCase& c) {
  int mx = 0;
  for (int l : c.lens) mx = std::max(mx, l);
  return fmt::format(
      "batch {}/{} Hq {} Hkv {} D {} page {} {} B {} max_len {} combined {} cap {} alibi {} rope "
      "{} window {} sinks {} huge {} q_std {} kv_std {}",
      DTypeName(c.q_dtype), DTypeName(c.kv_dtype), c.num_qo_heads, c.num_kv_heads, c.head_dim,
      c.page_size, c.layout == KVLayout::kNHD ? "NHD" : "HND", c.lens.size(), mx, c.combined,
      c.options.logits_soft_cap, c.options.alibi, c.options.rope, c.options.window_left, c.sinks,
      c.huge_negative, c.q_std, c.kv_std);
}

BatchDecodeConfig ConfigFor(const BatchCase& c, int max_batch) {
  BatchDecodeConfig cfg;
  cfg.num_qo_heads = c.num_qo_heads;
  cfg.num_kv_heads = c.num_kv_heads;
  cfg.head_dim = c.head_dim;
  cfg.page_size = c.page_size;
  cfg.q_dtype = c.q_dtype;
  cfg.kv_dtype = c.kv_dtype;
  cfg.layout = c.layout;
  cfg.max_batch_size = max_batch;
  return cfg;
}

PlannedCase PlanCase(const BatchCase& c, const PagedCache& pc, const DecodeOptions& options) {
  const int b = static_cast<int>(c.lens.size());
  auto wrapper = BatchDecode::Create(TestEngine(), ConfigFor(c, std::max(b, 1)));
  REQUIRE(wrapper.ok());
  const size_t ws_bytes = (*wrapper)->WorkspaceBytes();
  PlannedCase p{std::move(*wrapper), DeviceBuffer(ws_bytes)};
  const Status s = p.wrapper->Plan(pc.indptr.data(), pc.last_len.data(), b, options, p.ws.data(),
                                   p.ws.bytes(), nullptr, pc.page_ids.data(), pc.num_pages);
  INFO(Describe(c) << ": plan " << s.ToString());
  REQUIRE(s.ok());
  return p;
}

PlanHeader DownloadPlanHeader(const DeviceBuffer& ws) {
  Synchronize();
  // Work items, merge items, persistent CTAs, the merge kernel's items, the cluster size.
  int32_t words[5];
  static_assert(sizeof(words) <= ops::kDecodePlanHeaderBytes);
  ws.Download(words, sizeof(words));
  return {words[0], words[1], words[2], words[3], words[4]};
}

std::vector<attention::DecodeWorkItem> DownloadPlanWork(const DeviceBuffer& ws) {
  const PlanHeader h = DownloadPlanHeader(ws);
  constexpr size_t kHeader = ops::kDecodePlanHeaderBytes, kItem = sizeof(attention::DecodeWorkItem);
  std::vector<char> raw(kHeader + std::max(0, h.work) * kItem);
  ws.Download(raw.data(), raw.size());
  std::vector<attention::DecodeWorkItem> work(std::max(0, h.work));
  std::copy_n(raw.data() + kHeader, work.size() * kItem, reinterpret_cast<char*>(work.data()));
  return work;
}

void RunBatch(BatchCase c, std::mt19937& rng) {
  const int hq = c.num_qo_heads, d = c.head_dim, b = static_cast<int>(c.lens.size());
  PagedCache pc = BuildCache(c, rng);
  std::vector<float> q = RandomNormal(int64_t(b) * hq * d, rng, c.q_std);
  if (!c.q_head_scale.empty())
    for (int64_t i = 0; i < int64_t(b) * hq * d; ++i)
      q[i] *= c.q_head_scale[(i / d) % hq % c.q_head_scale.size()];
  if (c.huge_negative) {
    for (int64_t i = 0; i < int64_t(b) * hq; ++i) q[i * d] = 1024.f;
    c.options.sm_scale = 1.f;
  }
  std::vector<double> qd, sinks_d;
  DeviceBuffer dq = Upload16(c.q_dtype, q, &qd);
  DeviceBuffer dout(std::max<int64_t>(1, int64_t(b) * hq * d) * 2), dlse(std::max(1, b * hq) * 4),
      dsinks(hq * 4);
  dout.Fill(0xFF);
  dlse.Fill(0xFF);
  if (c.sinks) {
    std::vector<float> s = RandomNormal(hq, rng, 2.f);
    dsinks.Upload(s.data(), hq * 4);
    sinks_d.assign(s.begin(), s.end());
    c.options.sinks = TensorView::Contiguous(dsinks.data(), DType::kF32, {hq});
  }
  PlannedCase planned = PlanCase(c, pc, c.options);
  const std::string what = Describe(c);
  if (c.expect_persistent >= 0 && !DryRun()) {
    const PlanHeader h = DownloadPlanHeader(planned.ws);
    const int64_t units = int64_t(h.work) * c.num_kv_heads * ((hq / c.num_kv_heads + 15) / 16);
    const int64_t expect =
        c.expect_persistent == 0 ? 0 : std::min<int64_t>(c.expect_persistent, units);
    INFO(what << ": work items " << h.work << ", merges " << h.merge << ", persistent CTAs "
              << h.persistent_ctas);
    CHECK(h.persistent_ctas == expect);
  }
  TensorView tk, tv;
  CacheViews(c, pc, &tk, &tv);
  TensorView tlse =
      c.with_lse ? TensorView::Contiguous(dlse.data(), DType::kF32, {b, hq}) : TensorView{};
  const Status s =
      planned.wrapper->Run(TensorView::Contiguous(dq.data(), c.q_dtype, {b, hq, d}), tk, tv,
                           TensorView::Contiguous(pc.indices.data(), DType::kI32,
                                                  {static_cast<int64_t>(pc.page_ids.size())}),
                           TensorView::Contiguous(dout.data(), c.q_dtype, {b, hq, d}), tlse);
  INFO(what << ": run " << s.ToString());
  REQUIRE(s.ok());
  Synchronize();
  if (DryRun()) return;
  std::vector<double> ref_out, ref_lse;
  Reference(c, pc, qd, c.sinks ? &sinks_d : nullptr, c.options, &ref_out, &ref_lse);
  std::vector<float> out = Download16(c.q_dtype, dout, int64_t(b) * hq * d);
  std::vector<float> lse = DownloadF32(dlse, int64_t(b) * hq);
  double tol = OutTolerance(c.q_dtype, DTypeBytes(c.kv_dtype) == 1, c.options.rope);
  if (c.huge_negative) tol = 0.08;
  CheckDecode(out, ref_out, c.with_lse ? &lse : nullptr, ref_lse, tol, what,
              LseTolerance(c.q_dtype, c.options.rope));
}

std::vector<int> MixedLengths(int b, int max_len, int page_size, std::mt19937& rng) {
  std::vector<int> lens = {0, 1, page_size - 1, page_size, page_size + 1, max_len};
  std::uniform_int_distribution<int> dist(1, max_len);
  while (static_cast<int>(lens.size()) < b)
    lens.push_back(dist(rng) / (lens.size() % 3 ? 8 : 1) + 1);
  lens.resize(b);
  std::shuffle(lens.begin(), lens.end(), rng);
  for (int& l : lens) l = std::max(0, l);
  return lens;
}

BatchCase* AddCase(std::vector<BatchCase>& cases, int qo, int kv, std::vector<int> lens) {
  BatchCase c;
  c.num_qo_heads = qo;
  c.num_kv_heads = kv;
  c.lens = std::move(lens);
  cases.push_back(c);
  return &cases.back();
}

}  // namespace flashjit::test
