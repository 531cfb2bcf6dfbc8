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
--backends cudnn[,flash].
Session 13: --configs NAME,... (bench_decode's named configurations: heads, head_dim, dtype) over
B x L in {1, 16, 64, 256} x {1k, 4k, 16k}, shapes of more than 16 GiB of KV left out as there;
rows carry the configuration's name. SDPA has no logits soft cap and no sliding window: the soft
cap is left out (timed without it), and a window of W keys is timed as SDPA over the last W keys
(contiguous, the same bytes as the paged kernel reads). Page size does not apply (contiguous KV).
--hq/--hkv/--head-dim/--dtype f16|bf16 set the default grid's configuration."""
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch_timing import b2b_us as _b2b_us
from torch_timing import median_us as _median_us
from torch_timing import queued_us as _queued_us

HQ, HKV, D = 32, 8, 128

# name: (q heads, kv heads, head_dim, dtype, window keys or 0); as bench_decode.cc's NamedConfigs
# (page size and soft cap do not apply here).
CONFIGS = {
    "base": (32, 8, 128, "bf16", 0),
    "tp8": (8, 1, 128, "bf16", 0),
    "tp4": (16, 2, 128, "bf16", 0),
    "qwen7b": (28, 4, 128, "bf16", 0),
    "gemma2": (16, 8, 256, "bf16", 0),
    "gemma2w": (16, 8, 256, "bf16", 4096),
    "mha": (32, 32, 128, "bf16", 0),
    "d64": (32, 8, 64, "bf16", 0),
    "page1": (32, 8, 128, "bf16", 0),
    "page64": (32, 8, 128, "bf16", 0),
    "f16": (32, 8, 128, "f16", 0),
}
MAX_CONFIG_KV_BYTES = 16 << 30


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


def run_shape(name, hq, hkv, d, dtype, b, length, keys, backends, dev):
    """Times SDPA for one shape (keys: the keys read per request) and prints its rows."""
    dt = torch.float16 if dtype == "f16" else torch.bfloat16
    kv_bytes = b * keys * hkv * d * 2 * 2
    copies = max(1, min(16, (1 << 30) // kv_bytes))
    ks = [torch.randn(b, hkv, keys, d, device=dev, dtype=dt) for _ in range(copies)]
    vs = [torch.randn(b, hkv, keys, d, device=dev, dtype=dt) for _ in range(copies)]
    qg = [torch.randn(b, hkv, hq // hkv, d, device=dev, dtype=dt) for _ in range(copies)]
    q1 = [x.reshape(b, hq, 1, d) for x in qg]
    label = f"{name} " if name else ""
    for bname, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                           ("flash", SDPBackend.FLASH_ATTENTION)):
        if bname not in backends:
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
                print(f"{bname + ':' + form:<24} {label}B={b} L={length:<6} {us:9.2f} "
                      f"{kv_bytes / us / 1e6:7.3f} {bb:9.2f} {kv_bytes / bb / 1e6:7.3f} "
                      f"{qu:9.2f} {kv_bytes / qu / 1e6:7.3f}", flush=True)
            except Exception as ex:  # noqa: BLE001 - report and go on
                print(f"{bname + ':' + form:<24} {label}B={b} L={length:<6} unavailable: "
                      f"{str(ex).splitlines()[0][:80]}", flush=True)
    del ks, vs, qg, q1
    torch.cuda.empty_cache()


def main():
    dev = torch.device("cuda")
    shapes = _option("--shapes", "")
    wanted = set(shapes.split(",")) if shapes else None
    backends = set(_option("--backends", "cudnn,flash").split(","))
    configs = [c for c in _option("--configs", "").split(",") if c]
    print(f"torch {torch.__version__} cudnn {torch.backends.cudnn.version()} "
          f"{torch.cuda.get_device_name()}")
    print(f"{'backend':<24} {'shape':<14} {'us':>9} {'TB/s':>7} {'b2b us':>9} {'TB/s':>7} "
          f"{'queued us':>9} {'TB/s':>7}")
    if configs:
        for name in configs:
            hq, hkv, d, dtype, window = CONFIGS[name]
            for b in (1, 16, 64, 256):
                for length in (1024, 4096, 16384):
                    key = f"{b}x{length}"
                    if wanted is not None and key not in wanted and f"{name}:{key}" not in wanted:
                        continue
                    keys = min(length, window) if window else length
                    if b * length * hkv * d * 4 > MAX_CONFIG_KV_BYTES and keys == length:
                        continue
                    run_shape(name, hq, hkv, d, dtype, b, length, keys, backends, dev)
        return 0
    hq = int(_option("--hq", HQ))
    hkv = int(_option("--hkv", HKV))
    d = int(_option("--head-dim", D))
    dtype = _option("--dtype", "bf16")
    custom = (hq, hkv, d, dtype) != (HQ, HKV, D, "bf16")
    for b in (1, 16, 64, 256):
        for length in (1024, 4096, 16384, 32768):
            if wanted is not None and f"{b}x{length}" not in wanted:
                continue
            run_shape("custom" if custom else "", hq, hkv, d, dtype, b, length, length, backends,
                      dev)
    return 0


if __name__ == "__main__":
    sys.exit(main())
