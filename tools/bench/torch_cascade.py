#!/usr/bin/env python3
"""PyTorch eager baseline for the attention-state merges, timed like tools/bench/bench_cascade.cc.

The same merge written in eager PyTorch (fp32 math over bf16 states, base-2 log-sum-exps):
    m = max_i s_i;  w_i = 2^(s_i - m);  v = sum_i w_i v_i / sum_i w_i;  s = m + log2(sum_i w_i)
Bytes that must move are counted as the flashjit benchmark counts them. Prints one line per case.
"""

import torch
from torch_timing import b2b_us, median_us, queued_us

DEV = "cuda"


def copies_for(nbytes):
    return 1 if nbytes >= (64 << 20) else min(64, (160 << 20) // nbytes + 1)


def merge(v, s):
    """v [seq, n, heads, d] bf16, s [seq, n, heads] f32 -> merged (v, s)."""
    m = s.amax(dim=1, keepdim=True)
    w = torch.exp2(s - m)
    den = w.sum(dim=1)
    out = (v.float() * w.unsqueeze(-1)).sum(dim=1) / den.unsqueeze(-1)
    return out.to(v.dtype), m.squeeze(1) + torch.log2(den)


def bench(seq, n, heads, d):
    v_bytes, s_bytes = seq * heads * d * 2, seq * heads * 4
    moved = (n + 1) * (v_bytes + s_bytes)
    c = copies_for(n * (v_bytes + s_bytes))
    vs = [torch.randn(seq, n, heads, d, device=DEV, dtype=torch.bfloat16) for _ in range(c)]
    ss = [torch.randn(seq, n, heads, device=DEV, dtype=torch.float32) for _ in range(c)]
    fn = lambda i: merge(vs[i], ss[i])
    us = median_us(fn, c, 50, 5)
    b2b = b2b_us(fn, c, 30, 3)
    qu = queued_us(fn, c, 50, 5)
    name = "merge_state" if n == 2 else "merge_states"
    shape = f"bf16 seq {seq} states {n} heads {heads} d {d}"
    print(f"torch {name:<14} {shape:<40} {us:9.2f} us {moved / (us * 1e-6) / 1e12:6.3f} TB/s"
          f" | queued {qu:9.2f} us {moved / (qu * 1e-6) / 1e12:6.3f} TB/s"
          f" | back-to-back {b2b:9.2f} us {moved / (b2b * 1e-6) / 1e12:6.3f} TB/s", flush=True)


def main():
    for seq in (1, 64, 2048, 16384):
        bench(seq, 2, 32, 128)
    bench(16384, 2, 32, 256)
    for n in (4, 16):
        bench(2048, n, 32, 128)
    bench(64, 16, 32, 128)


if __name__ == "__main__":
    main()
