// The batch decode GPU tests' cases and their check: a BatchCase (heads, lengths, dtypes,
// layout, options), its paged cache in random page order with the host copy the fp64 reference
// reads, and RunBatch (plan, run, compare with the reference).
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attention/decode_params.cuh"
#include "tests/gpu/decode_test_util.h"

namespace flashjit::test {

struct BatchCase {
  DType q_dtype = DType::kBF16, kv_dtype = DType::kBF16;
  int num_qo_heads = 8, num_kv_heads = 2, head_dim = 128, page_size = 16;
  KVLayout layout = KVLayout::kNHD;
  std::vector<int> lens;
  bool sinks = false, with_lse = true, combined = true, huge_negative = false;
  float q_std = 1.f, kv_std = 1.f;  // standard deviations of the random q and K/V values
  std::vector<float> q_head_scale;  // when given: query head h's values times [h % size]
  DecodeOptions options;
  // Checked after Plan from the workspace header: -1 no check; 0 the plan is not persistent;
  // n > 0 the plan is persistent with min(n, units) CTAs (units: work items x head tiles).
  int expect_persistent = -1;
};

// A paged cache with every request's pages in random order, its host copy (as the device
// holds it) and the page table.
struct PagedCache {
  int64_t num_pages = 0;
  DeviceBuffer k, v, indices;
  std::vector<double> host_k, host_v;  // [num_pages, page_size, Hkv, D] (NHD order)
  std::vector<int32_t> indptr, last_len, page_ids;
};

PagedCache BuildCache(const BatchCase& c, std::mt19937& rng);

// The K and V views of the cache in the case's layout (combined: one tensor holding both).
void CacheViews(const BatchCase& c, const PagedCache& pc, TensorView* k, TensorView* v);

// The reference output [B, Hq, D] and lse [B, Hq] of a batch.
void Reference(const BatchCase& c, const PagedCache& pc, const std::vector<double>& q,
               const std::vector<double>* sinks, const DecodeOptions& opts,
               std::vector<double>* out, std::vector<double>* lse);

std::string Describe(const BatchCase& c);

// The wrapper configuration of the case's geometry and dtypes for batches of up to `max_batch`.
BatchDecodeConfig ConfigFor(const BatchCase& c, int max_batch);

// The case's wrapper (batches of up to max(B, 1)) and workspace, planned for its B requests with
// `options`; REQUIREs the plan.
struct PlannedCase {
  std::unique_ptr<BatchDecode> wrapper;
  DeviceBuffer ws;
};
PlannedCase PlanCase(const BatchCase& c, const PagedCache& pc, const DecodeOptions& options);

// The header Plan() writes at the start of the workspace (read after a sync): the number of work
// items, of merge items, the persistent grid's CTAs (0: not persistent), the merge items the
// merge kernel merges (0: none; the last CTAs merge them), and the plan's cluster size (0: its
// chunks do not merge in clusters).
struct PlanHeader {
  int32_t work = 0, merge = 0, persistent_ctas = 0, kernel_merge = 0, cluster = 0;
};
PlanHeader DownloadPlanHeader(const DeviceBuffer& ws);
// The plan's work items (the header's count of them, read after a sync).
std::vector<attention::DecodeWorkItem> DownloadPlanWork(const DeviceBuffer& ws);

// Plans and runs the case on fresh random q (and sinks), then compares output and LSE with the
// fp64 reference; checks the plan's persistent form where the case asks (expect_persistent).
void RunBatch(BatchCase c, std::mt19937& rng);

// b lengths up to max_len with 0, 1 and the page boundaries among them, in random order.
std::vector<int> MixedLengths(int b, int max_len, int page_size, std::mt19937& rng);

// Appends a case of `qo` / `kv` heads over `lens` to `cases`; the pointer is valid until the
// next append.
BatchCase* AddCase(std::vector<BatchCase>& cases, int qo, int kv, std::vector<int> lens);

}  // namespace flashjit::test
