// RunSampling: validate every tensor and knob, choose the variant, launch one block per row.
#include "src/ops/sampling/sampling_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "sampling/sampling_params.cuh"
#include "src/engine/engine_impl.h"
#include "src/runtime/driver.h"

namespace flashjit::ops {
namespace {

bool Given(const TensorView& t) { return t.data != nullptr; }

// An optional per-row tensor: [batch], `dtype`, contiguous, on the input's device.
Status CheckPerRow(const TensorView& t, std::string_view name, DType dtype, int64_t batch,
                   const TensorView& in) {
  if (!Given(t)) return Status::Ok();
  FLASHJIT_RETURN_IF_ERROR(CheckTensor(t, name, 1, {dtype}));
  FLASHJIT_RETURN_IF_ERROR(CheckDim(t, name, 0, batch, "the batch size"));
  FLASHJIT_RETURN_IF_ERROR(CheckContiguous(t, name));
  return CheckSameDevice(t, name, in, "the input");
}

Status CheckKnobs(const SamplingRequest& r, int64_t vocab) {
  const SamplingFilter f = r.filter;
  const bool uses_k =
      f == SamplingFilter::kTopK || f == SamplingFilter::kJoint || f == SamplingFilter::kTopKFirst;
  const bool uses_p =
      f == SamplingFilter::kTopP || f == SamplingFilter::kJoint || f == SamplingFilter::kTopKFirst;
  if (uses_k && !Given(r.top_k_arr) && (r.top_k < 1 || r.top_k > vocab))
    return Status::InvalidArgument(
        fmt::format("top_k: {} is outside [1, vocab = {}]", r.top_k, vocab));
  if (uses_p && !Given(r.top_p_arr) && !(r.top_p > 0.f && r.top_p <= 1.f))
    return Status::InvalidArgument(fmt::format("top_p: {} is outside (0, 1]", r.top_p));
  if (f == SamplingFilter::kMinP && !Given(r.min_p_arr) && !(r.min_p >= 0.f && r.min_p <= 1.f))
    return Status::InvalidArgument(fmt::format("min_p: {} is outside [0, 1]", r.min_p));
  if (!Given(r.temperature_arr) && !(std::isfinite(r.temperature) && r.temperature > 0.f))
    return Status::InvalidArgument(
        fmt::format("temperature: {}; it must be finite and > 0", r.temperature));
  return Status::Ok();
}

// Whether kernels for `device` run thread-block clusters (compiled for sm_90 or later), and its
// SM count.
struct DeviceTraits {
  bool clusters = false;
  int sms = 0;
};

bool ArchHasClusters(const char* arch) {  // "sm_90", "sm_90a", "sm_100", ...
  return std::strncmp(arch, "sm_", 3) == 0 && std::atoi(arch + 3) >= 90;
}

// The device's own traits are asked once per device and kept; an engine built for a fixed arch
// (EngineConfig::arch) decides clusters by that arch, so engines for different archs on one
// device never share the decision.
DeviceTraits TraitsOf(Engine& engine, int device) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];  // 0 unknown, else 1 + clusters + 2 * sms
  DeviceTraits t;
  const int v =
      device >= 0 && device < kMaxDevices ? cache[device].load(std::memory_order_relaxed) : 0;
  if (v) {
    t = {((v - 1) & 1) != 0, (v - 1) >> 1};
  } else {
    auto info = runtime::GetDeviceInfo(device);
    if (info.ok()) {
      t.clusters = ArchHasClusters(info->arch().c_str());
      t.sms = info->sm_count;
    }
    if (device >= 0 && device < kMaxDevices && info.ok())
      cache[device].store(1 + (t.clusters ? 1 : 0) + 2 * t.sms, std::memory_order_relaxed);
  }
  const std::string& fixed = engine.impl().config().arch;
  if (!fixed.empty()) t.clusters = ArchHasClusters(fixed.c_str());
  return t;
}

}  // namespace

Status RunSampling(Engine& engine, const SamplingRequest& r) {
  const TensorView& in = r.in;
  const std::string_view in_name = r.input_name;
  if (r.input == SamplingInput::kProbs) {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(in, in_name, 2, {DType::kF32}));
  } else {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(in, in_name, 2, {DType::kF32, DType::kF16, DType::kBF16}));
  }
  FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(in, in_name));
  const int64_t rows = in.shape[0], vocab = in.shape[1];
  const SamplingOptions& o = r.options;
  int64_t batch = rows;
  if (Given(o.indices)) {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(o.indices, "indices", 1, {DType::kI32, DType::kI64}));
    FLASHJIT_RETURN_IF_ERROR(CheckContiguous(o.indices, "indices"));
    FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(o.indices, "indices", in, in_name));
    batch = o.indices.shape[0];
    if (batch > 0 && rows == 0)
      return Status::InvalidArgument(fmt::format("{}: 0 rows for {} indices", in_name, batch));
  }
  if (r.output == SamplingOutput::kSample) {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(r.out, "samples", 1, {DType::kI32}));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(r.out, "samples", 0, batch, "the batch size"));
    FLASHJIT_RETURN_IF_ERROR(CheckContiguous(r.out, "samples"));
  } else {
    const DType out_dtype = r.output == SamplingOutput::kProbs ? DType::kF32 : in.dtype;
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(r.out, "out", 2, {out_dtype}));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(r.out, "out", 0, batch, "the batch size"));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(r.out, "out", 1, vocab, "the vocabulary size"));
    FLASHJIT_RETURN_IF_ERROR(CheckInnerContiguous(r.out, "out"));
  }
  FLASHJIT_RETURN_IF_ERROR(
      CheckSameDevice(r.out, r.output == SamplingOutput::kSample ? "samples" : "out", in, in_name));
  if (Given(o.valid)) {
    FLASHJIT_RETURN_IF_ERROR(CheckTensor(o.valid, "valid", 1, {DType::kU8, DType::kBool}));
    FLASHJIT_RETURN_IF_ERROR(CheckDim(o.valid, "valid", 0, batch, "the batch size"));
    FLASHJIT_RETURN_IF_ERROR(CheckContiguous(o.valid, "valid"));
    FLASHJIT_RETURN_IF_ERROR(CheckSameDevice(o.valid, "valid", in, in_name));
  }
  FLASHJIT_RETURN_IF_ERROR(CheckPerRow(r.top_k_arr, "top_k_arr", DType::kI32, batch, in));
  FLASHJIT_RETURN_IF_ERROR(CheckPerRow(r.top_p_arr, "top_p_arr", DType::kF32, batch, in));
  FLASHJIT_RETURN_IF_ERROR(CheckPerRow(r.min_p_arr, "min_p_arr", DType::kF32, batch, in));
  FLASHJIT_RETURN_IF_ERROR(
      CheckPerRow(r.temperature_arr, "temperature_arr", DType::kF32, batch, in));
  if (vocab < 1 && batch > 0)
    return Status::InvalidArgument(fmt::format("{}: vocabulary size 0", in_name));
  // The radix select's 32-bit significand sums are exact up to 2^20 elements per row.
  if (vocab > (int64_t{1} << 20) || batch > 0x7fffffff)
    return Status::InvalidArgument(
        fmt::format("{}: {} rows of {} tokens; at most 2^20 tokens and 2^31-1 rows supported",
                    in_name, batch, vocab));
  FLASHJIT_RETURN_IF_ERROR(CheckKnobs(r, vocab));
  const SamplingTuning& tune = o.tuning;
  if (tune.cluster != 0 && tune.cluster != 1 && tune.cluster != 2 && tune.cluster != 4 &&
      tune.cluster != 8)
    return Status::InvalidArgument(
        fmt::format("options.tuning.cluster: {}; allowed: 0 (chosen), 1, 2, 4, 8", tune.cluster));
  if (tune.cache_bytes < -1 || tune.cache_bytes > kSamplingMaxCacheBytes)
    return Status::InvalidArgument(
        fmt::format("options.tuning.cache_bytes: {}; allowed: -1 (chosen) or 0..{}",
                    tune.cache_bytes, kSamplingMaxCacheBytes));
  if (tune.candidates < -1 || tune.candidates > 22)
    return Status::InvalidArgument(fmt::format(
        "options.tuning.candidates: {}; allowed: -1 (chosen), 0, 1, 2, ..., 22", tune.candidates));
  if (tune.threads != 0 &&
      (tune.threads < 32 || tune.threads > 1024 || (tune.threads & (tune.threads - 1)) != 0))
    return Status::InvalidArgument(
        fmt::format("options.tuning.threads: {}; allowed: 0 (chosen), 32, 64, 128, 256, 512, 1024",
                    tune.threads));
  const DeviceTraits traits = TraitsOf(engine, in.device);
  if (tune.cluster > 1 && !traits.clusters)
    return Status::InvalidArgument(fmt::format(
        "options.tuning.cluster: {} needs thread-block clusters (sm_90 or later)", tune.cluster));
  if (batch == 0) return Status::Ok();

  int vec = VectorWidth(DTypeBytes(in.dtype), vocab, {in.data}, {in.strides[0]});
  if (r.output != SamplingOutput::kSample)
    vec = std::min(vec,
                   VectorWidth(DTypeBytes(r.out.dtype), vocab, {r.out.data}, {r.out.strides[0]}));
  vec = std::min(vec, 4);
  SamplingSpec spec;
  spec.dtype = in.dtype;
  spec.input = r.input;
  spec.filter = r.filter;
  spec.output = r.output;
  spec.vec = static_cast<uint8_t>(vec);
  SamplingLaunch launch =
      ChooseSamplingLaunch(vocab, vec, static_cast<int>(DTypeBytes(in.dtype)), batch,
                           traits.clusters, traits.sms, tune.cluster, tune.cache_bytes);
  // The two-pass top-p kernel's form for tuning.candidates (SamplingTopPForm, sampling_family.cc).
  const bool candidates = SamplingTopPFormOf(tune.candidates).two_pass;
  const bool top_p_sample =
      r.filter == SamplingFilter::kTopP && r.output == SamplingOutput::kSample;
  if (tune.threads > 0) {
    if (launch.cluster > 1 && tune.threads < 256)
      return Status::InvalidArgument(
          fmt::format("options.tuning.threads: {} with {} blocks per row; clusters need >= 256",
                      tune.threads, launch.cluster));
    launch.threads = tune.threads;
  } else if (top_p_sample && candidates && launch.cluster == 1 && launch.threads == 512 &&
             batch > (traits.sms > 0 ? traits.sms : 132)) {
    // More rows than SMs: 256-thread blocks (compiled for two per SM), so that two rows share
    // an SM and one row's barriers and scans overlap the other's passes, instead of two waves
    // of one row per SM.
    launch.threads = 256;
  }
  if (batch * launch.cluster > 0x7fffffff)
    return Status::InvalidArgument(
        fmt::format("{}: {} rows x {} blocks per row exceed the grid limit 2^31-1", in_name, batch,
                    launch.cluster));
  spec.threads = static_cast<uint16_t>(launch.threads);
  spec.cluster = static_cast<uint8_t>(launch.cluster);
  spec.cache = launch.cache_vecs > 0 ? 1 : 0;
  const int64_t cache_bytes = static_cast<int64_t>(launch.cache_vecs) * vec * DTypeBytes(in.dtype);
  int cand_per_warp = 0;
  // Top-p sampling takes the two-pass path wherever its candidate regions fit (not in 1024-thread
  // blocks): measured on the H200 (2026-11-29, session 4 round 2, docs/perf/sampling.md) faster
  // than the radix select on every benchmark shape, B = 1 / 64 / 256 x V = 128256 / 32000, flat
  // and peaked (B = 256 x 128256, rows 131 MB, past the L2: 178.4 -> 127.9 us flat, 132.0 ->
  // 97.2 peaked); larger batches are unmeasured.
  // Pass 2's candidates in per-lane columns (kFormLaneColumns) where they paid (sampling_spec.h),
  // and the rest of the form (ChooseSamplingTopPForm; the figures below).
  const SamplingTopPChoice form = ChooseSamplingTopPForm(
      tune.candidates, launch.cluster, launch.threads, launch.chunk, batch, traits.sms);
  if (top_p_sample && candidates)
    cand_per_warp =
        SamplingCandidatesPerWarp(launch.chunk, launch.threads, cache_bytes, form.lane_columns);
  spec.candidates = cand_per_warp > 0 ? 1 : 0;
  spec.stamps = spec.candidates && tune.stamps != nullptr ? 1 : 0;
  // The digit scans (SamplingSpec::fast_scan bits): the fast scans with the exact prefix (3,
  // session 7), and at digits 2-3 scanned in integers by every warp (7, warp_scan, session 8)
  // for the default and the forms built on it (SamplingTopPForm::fast_scan -1), except in
  // clusters of blocks of fewer than 512 threads. Measured on the H200 (2026-11-30, session 8,
  // docs/perf/sampling.md; b2b, 7 against 3 in the same call): B = 1 / 64 / 256 x 128256 flat
  // -0.56 / -1.56 / -3.76 us, peaked -0.16 / -1.28 / -2.71; 64 / 256 x 32000 -0.4 to -0.9; 1 x
  // 32000 (clusters of 8 of 256 threads) +0.25 flat, +0.05 peaked: 3 there.
  if (spec.candidates) spec.fast_scan = static_cast<uint8_t>(form.fast_scan);
  // The two-pass kernel's forms (kForm* in sampling_params.cuh; what each tuning.candidates value
  // takes: kSamplingTopPForms in sampling_family.cc). The lane-private window pays only with more
  // rows than SMs, one block per row (measured on the H200, 2026-11-29 session 5,
  // docs/perf/sampling.md: B = 256 x 128256 flat 116.7 -> 112.5 us b2b, peaked 89.6 -> 90.8; B =
  // 256 x 32000 flat the same, peaked +1; at B = 1 and 64, clusters, it cost 0.5-1 us).
  // The form compiled into the variant (variant field form: the forms the launch never takes
  // left out, 40 % less code in clusters) for the default in clusters of 8 and 2 and for
  // tuning.candidates 13 everywhere; chosen at run time otherwise (12: the default's forms so).
  // Measured on the H200 (2026-11-30, session 8 round 2, docs/perf/sampling.md; b2b, 13 against the
  // default's every-form kernel in the same call): B = 1 x 128256 flat / peaked -1.16 / -0.92 us, x
  // 32000 -0.51 / -0.35; B = 64 x 128256 -0.35 / -0.07, x 32000 -0.45 / -0.22; one block per row (B
  // = 256) x 128256 +0.67 / -0.13, x 32000 -0.10 / -0.33: not there; clusters of 4 unmeasured.
  if (spec.candidates && form.compiled) spec.form = static_cast<int16_t>(form.cand_form);
  FLASHJIT_ASSIGN_OR_RETURN(const runtime::Kernel* kernel, KernelFor(engine, spec, in.device));

  sampling::SamplingParams p{};
  p.input = in.data;
  p.indices = Given(o.indices) ? o.indices.data : nullptr;
  p.index_bytes = Given(o.indices) ? DTypeBytes(o.indices.dtype) : 4;
  p.out = r.out.data;
  p.valid = static_cast<uint8_t*>(o.valid.data);
  p.top_k_arr = static_cast<const int32_t*>(r.top_k_arr.data);
  p.top_p_arr = static_cast<const float*>(r.top_p_arr.data);
  p.min_p_arr = static_cast<const float*>(r.min_p_arr.data);
  p.temperature_arr = static_cast<const float*>(r.temperature_arr.data);
  p.seed_ptr = static_cast<const uint64_t*>(o.rng.seed_device);
  p.offset_ptr = static_cast<const uint64_t*>(o.rng.offset_device);
  p.batch = batch;
  p.vocab = vocab;
  p.rows_in = rows;
  p.in_stride = in.strides[0];
  p.out_stride = r.output == SamplingOutput::kSample ? 0 : r.out.strides[0];
  p.seed = o.rng.seed;
  p.offset = o.rng.offset;
  p.top_k = r.top_k;
  p.top_p = r.top_p;
  p.min_p = r.min_p;
  p.temperature = r.temperature;
  p.cache_vecs = launch.cache_vecs;
  p.chunk = launch.chunk;
  p.cand_per_warp = cand_per_warp;
  p.stamps = spec.stamps ? static_cast<uint64_t*>(tune.stamps) : nullptr;
  p.cand_form = form.cand_form;
  runtime::LaunchConfig cfg;
  cfg.grid_x = static_cast<uint32_t>(batch * launch.cluster);
  cfg.cluster_x = static_cast<uint32_t>(launch.cluster);
  cfg.block_x = spec.threads;
  // The slice cache (vectors of the input element type), then the candidate regions, which
  // hold pass 1's lane-private window before pass 2 fills them.
  const int64_t regions = int64_t{8} * (launch.threads / 32) * cand_per_warp;
  cfg.dynamic_smem = static_cast<uint32_t>(
      cand_per_warp > 0 ? (cache_bytes + 15) / 16 * 16 +
                              ((p.cand_form & sampling::kFormLaneWindow)
                                   ? std::max<int64_t>(regions, sampling::kLaneWindowBytes)
                                   : regions)
                        : cache_bytes);
  return kernel->Launch(0, cfg, &p, static_cast<CUstream>(o.stream));
}

}  // namespace flashjit::ops
