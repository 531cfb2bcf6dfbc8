#!/usr/bin/env python3
"""PyTorch baselines for decode on the benchmark grid of bench_decode.cc: cuDNN SDPA (and the
flash backend) with contiguous KV, bf16, 32 query / 8 kv heads, head_dim 128.

GQA is expressed without copying K/V: the group of 4 query heads that share a kv head becomes
the query length, q [B, 8, 4, 128] against k, v [B, 8, L, 128] (no mask: a decode query sees
every key), so exactly K + V are read. The enable_gqa form is timed too where it runs.
Median of event-timed runs (a sync after each call, so the host enqueue is counted, as in
bench_decode's first figure), rotating over input copies when a shape's KV is small; the median of
calls timed alone with the host enqueue hidden behind a spin (bench_decode's queued figure); and
the GPU time per call of calls enqueued back to back (bench_decode's back-to-back figure).

Options (session 11, to keep a device call short): --shapes BxL,... (as bench_decode's),
--backends cudnn[,flash]."""
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch_timing import b2b_us as _b2b_us
from torch_timing import median_us as _median_us
from torch_timing import queued_us as _queued_us

HQ, HKV, D = 32, 8, 128


def median_us(fn, copies):
    return _median_us(fn, copies, iters=30, warmup=5)


def queued_us(fn, copies):
    return _queued_us(fn, copies, iters=30, warmup=5)


def b2b_us(fn, copies):
    return _b2b_us(fn, copies, iters=30, warmup=5)


def _option(name, default):
    if name in sys.argv[1:-1]:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def main():
    dev = torch.device("cuda")
    shapes = _option("--shapes", "")
    wanted = set(shapes.split(",")) if shapes else None
    backends = set(_option("--backends", "cudnn,flash").split(","))
    print(f"torch {torch.__version__} cudnn {torch.backends.cudnn.version()} "
          f"{torch.cuda.get_device_name()}")
    print(f"{'backend':<24} {'shape':<14} {'us':>9} {'TB/s':>7} {'b2b us':>9} {'TB/s':>7} "
          f"{'queued us':>9} {'TB/s':>7}")
    for b in (1, 16, 64, 256):
        for length in (1024, 4096, 16384, 32768):
            if wanted is not None and f"{b}x{length}" not in wanted:
                continue
            kv_bytes = b * length * HKV * D * 2 * 2
            copies = max(1, min(16, (1 << 30) // kv_bytes))
            ks = [torch.randn(b, HKV, length, D, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
            vs = [torch.randn(b, HKV, length, D, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
            qg = [torch.randn(b, HKV, HQ // HKV, D, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
            q1 = [x.reshape(b, HQ, 1, D) for x in qg]
            for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                                  ("flash", SDPBackend.FLASH_ATTENTION)):
                if name not in backends:
                    continue
                for form in ("group-as-q", "enable_gqa"):
                    try:
                        with sdpa_kernel(backend):
                            if form == "group-as-q":
                                fn = lambda c: torch.nn.functional.scaled_dot_product_attention(
                                    qg[c], ks[c], vs[c])
                            else:
                                fn = lambda c: torch.nn.functional.scaled_dot_product_attention(
                                    q1[c], ks[c], vs[c], enable_gqa=True)
                            us = median_us(fn, copies)
                            bb = b2b_us(fn, copies)
                            qu = queued_us(fn, copies)
                        print(f"{name + ':' + form:<24} B={b} L={length:<6} {us:9.2f} "
                              f"{kv_bytes / us / 1e6:7.3f} {bb:9.2f} {kv_bytes / bb / 1e6:7.3f} "
                              f"{qu:9.2f} {kv_bytes / qu / 1e6:7.3f}", flush=True)
                    except Exception as ex:  # noqa: BLE001 - report and go on
                        print(f"{name + ':' + form:<24} B={b} L={length:<6} unavailable: "
                              f"{str(ex).splitlines()[0][:80]}", flush=True)
            del ks, vs, qg, q1
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
