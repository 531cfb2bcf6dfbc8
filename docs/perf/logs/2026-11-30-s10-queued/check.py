"""Checks the queued timing (tools/bench/torch_timing.py) on PyTorch ops: synced / queued / b2b,
and queued behind spins of 10, 30, 300 us (the figure must not move once the spin outlasts the
host's enqueue)."""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, "tools/bench")
from torch_timing import b2b_us, median_us, queued_us  # noqa: E402


def row(name, fn, copies, moved):
    us = median_us(fn, copies, 30, 5)
    qu = queued_us(fn, copies, 30, 5)
    bb = b2b_us(fn, copies, 30, 5)
    spins = []
    for s in ("10", "30", "300"):
        os.environ["FLASHJIT_BENCH_SPIN_US"] = s
        spins.append(queued_us(fn, copies, 30, 5))
    del os.environ["FLASHJIT_BENCH_SPIN_US"]
    tb = lambda t: moved / (t * 1e-6) / 1e12
    print(f"{name:<34} synced {us:8.2f} ({tb(us):5.3f}) queued {qu:8.2f} ({tb(qu):5.3f}) "
          f"b2b {bb:8.2f} ({tb(bb):5.3f}) | queued behind 10/30/300 us spins "
          + " / ".join(f"{x:.2f}" for x in spins), flush=True)


dev = "cuda"
x = [torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16) for _ in range(1)]
w = torch.randn(8192, device=dev, dtype=torch.bfloat16)
row("rms_norm 8192x8192", lambda i: F.rms_norm(x[i], (8192,), w, 1e-6), 1, 2 * 8192 * 8192 * 2)
xs = [torch.randn(64, 4096, device=dev, dtype=torch.bfloat16) for _ in range(8)]
w4 = torch.randn(4096, device=dev, dtype=torch.bfloat16)
row("rms_norm 64x4096", lambda i: F.rms_norm(xs[i], (4096,), w4, 1e-6), 8, 2 * 64 * 4096 * 2)
a = torch.randn(1 << 27, device=dev)
b = torch.empty_like(a)
row("copy 512 MiB", lambda i: b.copy_(a), 1, 2 * 4 * (1 << 27))
for bsz, length in ((1, 1024), (16, 4096), (64, 1024)):
    kv = bsz * length * 8 * 128 * 2 * 2
    c = max(1, min(16, (1 << 30) // kv))
    ks = [torch.randn(bsz, 8, length, 128, device=dev, dtype=torch.bfloat16) for _ in range(c)]
    vs = [torch.randn(bsz, 8, length, 128, device=dev, dtype=torch.bfloat16) for _ in range(c)]
    qs = [torch.randn(bsz, 8, 4, 128, device=dev, dtype=torch.bfloat16) for _ in range(c)]
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        row(f"cudnn sdpa B={bsz} L={length}",
            lambda i: F.scaled_dot_product_attention(qs[i], ks[i], vs[i]), c, kv)
