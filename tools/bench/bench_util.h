// Benchmark helpers: device-event timing (median of many runs, with rotation over several
// input sets so that repeated runs do not measure the L2), and a common command line.
//
// `--dry-run` (or FLASHJIT_DRY_RUN=1 with FLASHJIT_ARCH): build every kernel a benchmark uses
// into the cache and time nothing, so that the GPU run compiles nothing.
// `--once`: one call of each timed shape and no timing (figures print as 0), for a profiler:
// under `ncu -k <kernel> --launch-skip N --launch-count 1` launch N is the N-th shape's.
#pragma once

#include <cuda.h>
#include <flashjit/engine.h>

#include <functional>
#include <string>
#include <vector>

namespace flashjit::bench {

// Parses --dry-run and --once, sets up the environment and returns the engine. From here on an
// exception that escapes main (a bad argument, no driver on this machine, a failed launch) prints
// "<program>: error: <message>" and exits with status 2.
Engine& Setup(int argc, char** argv);
bool DryRun();
bool Once();

// Throws (as runtime::CudaStatus words it) where a driver call `what` did not succeed.
void CheckDriver(CUresult rc, const char* what);

// Median time in microseconds of `fn(i)` (i = iteration, for rotating inputs), timed with CUDA
// events around each call after `warmup` calls. In dry run, calls fn(0) once and returns 0; with
// --once, calls fn(0) once, waits for it and returns 0.
double MedianMicros(const std::function<void(int)>& fn, int iters = 50, int warmup = 5);

// GPU time per call of `iters` calls of `fn(i)` enqueued back to back (events around the whole
// batch, one sync): each call's host enqueue hides behind the previous kernel, so for kernels
// longer than the enqueue this is the kernel's own time, as a CUDA graph replay would see it.
// MedianMicros syncs after every call, so its figure also holds the host enqueue (4-6 µs).
// Returns 0 in dry run and with --once (no call).
double BackToBackMicros(const std::function<void(int)>& fn, int iters = 50);

// Median time in microseconds of `fn(i)` timed alone with the host enqueue hidden: before each
// call a one-thread spin kernel keeps the GPU busy while the host records the start event,
// enqueues the call and records the stop event, so the start event fires when the spin ends and
// the figure is the call's time on the GPU (its launch on the GPU included, the host's enqueue
// not). This is how a call inside a busy stream or a CUDA graph sees it, and how FlashInfer's
// bench_gpu_time times one (CUPTI kernel time, or events after an L2 flush that the host
// enqueues ahead of the call). The spin lasts at least 30 µs and 4x the longest host enqueue
// seen in the warm-up (FLASHJIT_BENCH_SPIN_US overrides it). Returns 0 in dry run and with
// --once (no call: MedianMicros makes the one call those modes need).
double QueuedMicros(const std::function<void(int)>& fn, int iters = 50, int warmup = 5);

// The three figures of one call: alone (MedianMicros: host enqueue included, "synced"), queued
// (QueuedMicros) and back to back (BackToBackMicros), each over `iters` calls.
struct Timings {
  double alone = 0, queued = 0, b2b = 0;
};
Timings TimeCall(const std::function<void(int)>& fn, int iters = 50, int warmup = 5);

// " | back-to-back X us Y TB/s": the note benchmarks append beside a MedianMicros figure.
std::string BackToBackNote(double micros, double bytes);
// " | queued X us Y TB/s".
std::string QueuedNote(double micros, double bytes);
// QueuedNote then BackToBackNote of `t`: the note beside a row whose figure is t.alone.
std::string TimingsNote(const Timings& t, double bytes);

// One line of the result table, also appended to $OUT/<bench>.tsv when OUT is set.
void Report(const std::string& bench, const std::string& shape, double micros, double bytes,
            double flops = 0, const std::string& note = "");

// Times the driver's device-to-device copy (cuMemcpyDtoDAsync, its copy kernel) of `bytes` from
// `src` to `dst` both ways (MedianMicros and BackToBackMicros) and reports it as a "device_copy"
// row named `what`, with 2 x bytes moved: the ceiling of plain loads and stores for an op that
// reads and writes `bytes`. Prints a line and times nothing where libcuda lacks the entry point;
// nothing in dry run or with --once.
void ReportDeviceCopy(const void* src, void* dst, size_t bytes, const std::string& what);

void* DeviceAlloc(size_t bytes);  // random-filled device memory (never zeros); freed at exit
void DeviceFillRandom16(void* p, size_t count, float stddev);  // fp16/bf16-safe random bits

}  // namespace flashjit::bench
