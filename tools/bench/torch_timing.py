"""CUDA-event timing shared by the PyTorch baseline scripts (torch_*.py). `fn(i)` runs call i;
callers rotate over their input copies with i % copies, so that repeated calls do not hit the L2.
Both return microseconds."""
import torch


def median_us(fn, copies, iters, warmup):
    """Median of `iters` calls, each timed alone between two events (host enqueue inside): the
    figure the benchmarks call "synced"."""
    for i in range(warmup):
        fn(i % copies)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(iters):
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
