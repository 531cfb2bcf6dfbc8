"""CUDA-event timing shared by the PyTorch baseline scripts (torch_*.py). `fn(i)` runs call i;
callers rotate over their input copies with i % copies, so that repeated calls do not hit the L2.
All return microseconds."""
import os
import time

import torch


def median_us(fn, copies, iters, warmup):
    """Median of `iters` calls, each timed alone between two events (host enqueue inside): the
    figure the benchmarks call "synced"."""
    for i in range(warmup):
        fn(i % copies)
    return _event_median(fn, copies, iters)


def _event_median(fn, copies, iters, before=None):
    """Median of `iters` calls, each between two events and waited for; `before()` (if any) is
    enqueued ahead of each start event."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(iters):
        if before is not None:
            before()
        start.record()
        fn(i % copies)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def b2b_us(fn, copies, iters, warmup):
    """GPU time per call of `iters` calls enqueued back to back between two events (one sync):
    host enqueue hidden, as in flashjit's "back-to-back" figures."""
    for i in range(warmup):
        fn(i % copies)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(iters):
        fn(i % copies)
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1000.0 / iters


def queued_us(fn, copies, iters, warmup):
    """Median of `iters` calls, each timed alone between two events while the GPU is still busy
    with a spin (torch.cuda._sleep) enqueued before the start event: the host enqueue is hidden,
    as in flashjit's "queued" figures (tools/bench/bench_util.h, QueuedMicros). The spin lasts at
    least 30 us and 4x the longest host enqueue seen in the warm-up (FLASHJIT_BENCH_SPIN_US
    overrides it); its cycles assume a clock of at most 2 GHz, so it is never shorter."""
    host = 0.0
    for i in range(max(warmup, 1)):
        t0 = time.perf_counter()
        fn(i % copies)
        host = max(host, time.perf_counter() - t0)
        torch.cuda.synchronize()
    spin_s = min(max(4 * host, 30e-6), 2e-3)
    if os.environ.get("FLASHJIT_BENCH_SPIN_US"):
        spin_s = float(os.environ["FLASHJIT_BENCH_SPIN_US"]) * 1e-6
    cycles = int(spin_s * 2e9)
    return _event_median(fn, copies, iters, lambda: torch.cuda._sleep(cycles))
