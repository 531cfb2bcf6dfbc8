#!/usr/bin/env python3
"""PyTorch eager baselines for the layer ops, timed like flashjit's benchmarks.

Bytes that must move are counted the same way as tools/bench/bench_{norm,rope,activation,page}.cc;
median of CUDA-event-timed runs, inputs rotating over enough copies to exceed the 60 MB L2.
Prints one line per case: name, shape, microseconds, TB/s (synced: each call alone, the host
enqueue included), and for the main rows the same call queued (host enqueue hidden behind a spin,
as flashjit's "queued" figures).
"""

import torch
import torch.nn.functional as F
from torch_timing import b2b_us as _b2b_us
from torch_timing import median_us as _median_us
from torch_timing import queued_us as _queued_us

DEV = "cuda"
BF16 = torch.bfloat16


def copies_for(nbytes):
    return 1 if nbytes >= (64 << 20) else min(64, (160 << 20) // nbytes + 1)


def median_us(fn, n, iters=50, warmup=5):
    return _median_us(fn, n, iters, warmup)


def b2b_us(fn, n):
    return _b2b_us(fn, n, iters=30, warmup=3)


def timed(fn, n):
    """(synced, queued) microseconds of fn over n rotating inputs."""
    return _median_us(fn, n, 50, 5), _queued_us(fn, n, 50, 5)


def report(name, shape, us, moved):
    """`us`: a synced figure, or a (synced, queued) pair from timed()."""
    us, queued = us if isinstance(us, tuple) else (us, None)
    note = "" if queued is None else \
        f" | queued {queued:.2f} us {moved / (queued * 1e-6) / 1e12:.3f} TB/s"
    print(f"torch {name:<24} {shape:<36} {us:9.2f} us {moved / (us * 1e-6) / 1e12:6.3f} TB/s"
          + note, flush=True)


def rand(*shape):
    return torch.randn(*shape, device=DEV, dtype=BF16)


def bench_copy():
    n = 1 << 30
    a, b = torch.empty(n, device=DEV, dtype=torch.uint8), torch.empty(n, device=DEV, dtype=torch.uint8)
    report("device_copy", "1 GiB", timed(lambda i: b.copy_(a), 1), 2 * n)


def bench_norm():
    for rows, hidden in [(1, 4096), (64, 4096), (2048, 4096), (16384, 4096), (8192, 8192),
                         (4096, 16384)]:
        nb = rows * hidden * 2
        c = copies_for(nb)
        xs = [rand(rows, hidden) for _ in range(c)]
        w = rand(hidden)
        us = timed(lambda i: F.rms_norm(xs[i], (hidden,), w, 1e-6), c)
        report("rms_norm", f"bf16 {rows}x{hidden}", us, 2 * nb + hidden * 2)
    # The ceiling for rmsnorm 8192x8192's bytes, timed the same way: one device copy of the same
    # tensor per call, and 20 back to back per event pair (per call), beside rms_norm's.
    x, y, w = rand(8192, 8192), torch.empty(8192, 8192, device=DEV, dtype=BF16), rand(8192)
    nb = x.numel() * 2
    report("copy (rmsnorm's bytes)", "bf16 8192x8192", timed(lambda i: y.copy_(x), 1), 2 * nb)
    b2b = median_us(lambda i: [y.copy_(x) for _ in range(20)], 1, iters=11, warmup=2) / 20
    report("copy b2b (per call)", "bf16 8192x8192", b2b, 2 * nb)
    b2b = median_us(lambda i: [F.rms_norm(x, (8192,), w, 1e-6) for _ in range(20)], 1, iters=11,
                    warmup=2) / 20
    report("rms_norm b2b (per call)", "bf16 8192x8192", b2b, 2 * nb + 8192 * 2)
    for rows, hidden in [(64, 4096), (16384, 4096), (8192, 8192)]:
        nb = rows * hidden * 2
        c = copies_for(2 * nb)
        xs = [rand(rows, hidden) for _ in range(c)]
        rs = [rand(rows, hidden) for _ in range(c)]
        w = rand(hidden)

        def fused(i):
            rs[i].add_(xs[i])
            xs[i].copy_(F.rms_norm(rs[i], (hidden,), w, 1e-6))

        us = timed(fused, c)
        report("add+rms_norm (unfused)", f"bf16 {rows}x{hidden}", us, 4 * nb + hidden * 2)
    for rows, hidden in [(64, 8192), (8192, 8192)]:
        nb = rows * hidden * 2
        c = copies_for(nb)
        xs = [rand(rows, hidden) for _ in range(c)]
        g = torch.randn(hidden, device=DEV)
        b = torch.randn(hidden, device=DEV)
        us = timed(lambda i: F.layer_norm(xs[i].float(), (hidden,), g, b, 1e-6).to(BF16), c)
        report("layer_norm", f"bf16 {rows}x{hidden}", us, 2 * nb + hidden * 8)
    for rows in [64, 16384]:
        nb = rows * 32 * 128 * 2
        c = copies_for(nb)
        xs = [rand(rows, 32, 128) for _ in range(c)]
        w = rand(128)
        us = timed(lambda i: F.rms_norm(xs[i], (128,), w, 1e-6), c)
        report("rms_norm qk", f"bf16 {rows}x32x128", us, 2 * nb + 256)


def rope_neox(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def bench_rope():
    hq, hk, d = 32, 8, 128
    inv = 1.0 / (1e4 ** (torch.arange(0, d, 2, device=DEV, dtype=torch.float32) / d))
    for nnz in [1, 64, 16384]:
        nb = nnz * (hq + hk) * d * 2
        c = copies_for(nb)
        qs = [rand(nnz, hq, d) for _ in range(c)]
        ks = [rand(nnz, hk, d) for _ in range(c)]
        pos = (torch.arange(nnz, device=DEV) * 7919) % 4096

        def run(i):
            ang = pos.float()[:, None] * inv[None, :]
            cos, sin = ang.cos()[:, None, :].to(BF16), ang.sin()[:, None, :].to(BF16)
            return rope_neox(qs[i], cos, sin), rope_neox(ks[i], cos, sin)

        us = timed(run, c)
        report("rope (unfused, eager)", f"bf16 nnz {nnz} h {hq}/{hk} d {d}", us, 2 * nb + nnz * 4)
        if nnz >= 8192:
            report("rope (unfused) b2b", f"bf16 nnz {nnz} h {hq}/{hk} d {d}", b2b_us(run, c),
                   2 * nb + nnz * 4)


def bench_activation():
    d = 14336
    for rows in [1, 64, 8192, 16384]:
        nb = rows * 2 * d * 2
        c = copies_for(nb)
        xs = [rand(rows, 2 * d) for _ in range(c)]
        us = timed(lambda i: F.silu(xs[i][:, :d]) * xs[i][:, d:], c)
        report("silu(x[:, :d]) * x[:, d:]", f"bf16 {rows}x(2*{d})", us, nb * 1.5)
    rows = 16384
    xs = [rand(rows, 2 * d)]
    us = timed(lambda i: F.gelu(xs[i][:, :d], approximate="tanh") * xs[i][:, d:], 1)
    report("gelu_tanh(x[:, :d]) * x[:, d:]", f"bf16 {rows}x(2*{d})", us, rows * 2 * d * 3)


def bench_page():
    heads, d, page = 8, 128, 16
    for nnz, batch in [(64, 64), (16384, 64)]:
        per, old = nnz // batch, 100
        pages_per = (old + per + page - 1) // page
        pages = pages_per * batch
        perm = torch.randperm(pages, device=DEV, dtype=torch.int64)
        cache = torch.empty(pages, 2, page, heads, d, device=DEV, dtype=BF16)
        t = torch.arange(nnz, device=DEV)
        b, p = t // per, old + t % per
        page_idx = perm[b * pages_per + p // page]
        slot = p % page
        nb = nnz * heads * d * 2
        c = copies_for(2 * nb)
        ks = [rand(nnz, heads, d) for _ in range(c)]
        vs = [rand(nnz, heads, d) for _ in range(c)]

        def run(i):
            cache[page_idx, 0, slot] = ks[i]
            cache[page_idx, 1, slot] = vs[i]

        us = timed(run, c)
        report("index_put append", f"bf16 nnz {nnz} reqs {batch} NHD", us, 4 * nb + nnz * 8)
        if nnz >= 8192:
            report("index_put append b2b", f"bf16 nnz {nnz} reqs {batch} NHD", b2b_us(run, c),
                   4 * nb + nnz * 8)
            # The ceiling for an append's bytes: one device copy of the new k and v rows (the
            # same bytes read and written, less the indices), timed both ways.
            src = rand(2 * nnz, heads, d)
            dst = torch.empty_like(src)
            report("copy (append's bytes)", f"bf16 2x{nnz}x{heads}x{d}",
                   timed(lambda i: dst.copy_(src), 1), 4 * nb)
            report("copy (append's bytes) b2b", f"bf16 2x{nnz}x{heads}x{d}",
                   b2b_us(lambda i: dst.copy_(src), 1), 4 * nb)


# --models: the shapes of tools/bench/model_shapes.h (keep the lists equal), synced and queued,
# one line each with the same shape strings as the flashjit benches' --models rows.
M_TOKENS = [1, 16, 256, 2048, 16384]
M_HIDDENS = [2048, 3072, 3584, 4096, 4100, 5120, 7168, 8192, 12288, 16384]
M_QK = [(32, 128), (28, 128), (16, 256), (8, 64)]
M_ACT = [3584, 11008, 14336, 18944]
M_ROPE = [(28, 4, 128, 128), (64, 8, 128, 128), (16, 8, 256, 256), (32, 32, 64, 64),
          (32, 8, 128, 64)]


def models_norm():
    for rows in M_TOKENS:
        for h in M_HIDDENS:
            nb = rows * h * 2
            c = copies_for(2 * nb)
            xs = [rand(rows, h) for _ in range(c)]
            rs = [rand(rows, h) for _ in range(c)]
            w, b = rand(h), rand(h)
            shape = f"bf16 {rows}x{h}"
            report("rmsnorm", shape, timed(lambda i: F.rms_norm(xs[i], (h,), w, 1e-6), c),
                   2 * nb + 2 * h)

            def fused(i):
                rs[i].add_(xs[i])
                xs[i].copy_(F.rms_norm(rs[i], (h,), w, 1e-6))

            report("fused_add_rmsnorm", shape, timed(fused, c), 4 * nb + 2 * h)
            # Gemma: rms_norm with weight (1 + w), as eager code computes it each call.
            report("gemma_rmsnorm", shape,
                   timed(lambda i: F.rms_norm(xs[i], (h,), 1 + w, 1e-6), c), 2 * nb + 2 * h)
            report("layernorm", shape,
                   timed(lambda i: F.layer_norm(xs[i], (h,), w, b, 1e-6), c), 2 * nb + 8 * h)
            del xs, rs
        for heads, d in M_QK:
            nb = rows * heads * d * 2
            c = copies_for(nb)
            xs = [rand(rows, heads, d) for _ in range(c)]
            w = rand(d)
            report("qk_rmsnorm", f"bf16 {rows}x{heads}x{d}",
                   timed(lambda i: F.rms_norm(xs[i], (d,), w, 1e-6), c), 2 * nb + 2 * d)
            del xs


def rope_any(x, cos, sin, rot, neox):
    """Unfused RoPE on the first `rot` dims of x [..., D]; cos / sin [..., rot / 2]."""
    xr = x[..., :rot]
    if neox:
        x1, x2 = xr[..., :rot // 2], xr[..., rot // 2:]
        out = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    else:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        out = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)
    return out if rot == x.shape[-1] else torch.cat((out, x[..., rot:]), dim=-1)


def models_rope():
    for nnz in M_TOKENS:
        for hq, hk, d, rot in M_ROPE:
            nb = nnz * (hq + hk) * d * 2
            c = copies_for(nb)
            qs = [rand(nnz, hq, d) for _ in range(c)]
            ks = [rand(nnz, hk, d) for _ in range(c)]
            pos = (torch.arange(nnz, device=DEV) * 7919) % 4096
            inv = 1.0 / (1e4 ** (torch.arange(0, rot, 2, device=DEV, dtype=torch.float32) / rot))
            cache = torch.randn(4096, rot, device=DEV)
            for cache_form in (False, True):
                for neox in (True, False):
                    def run(i):
                        if cache_form:
                            cs = cache[pos]
                            cos, sin = cs[:, None, :rot // 2], cs[:, None, rot // 2:]
                        else:
                            ang = pos.float()[:, None] * inv[None, :]
                            cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]
                        cos, sin = cos.to(BF16), sin.to(BF16)
                        return rope_any(qs[i], cos, sin, rot, neox), rope_any(ks[i], cos, sin, rot, neox)

                    moved = 2 * nb + nnz * 4 + (nnz * rot * 4 if cache_form else 0)
                    name = "rope_cos_sin_cache" if cache_form else "rope_pos_ids"
                    report(name, f"bf16 nnz {nnz} h {hq}/{hk} d {d} rot {rot} "
                           f"{'neox' if neox else 'gptj'}", timed(run, c), moved)
            del qs, ks


def models_activation():
    for rows in M_TOKENS:
        for d in M_ACT:
            nb = rows * 2 * d * 2
            c = copies_for(nb)
            xs = [rand(rows, 2 * d) for _ in range(c)]
            shape = f"bf16 {rows}x(2*{d})"
            report("silu_and_mul", shape, timed(lambda i: F.silu(xs[i][:, :d]) * xs[i][:, d:], c),
                   nb * 1.5)
            report("gelu_tanh_and_mul", shape,
                   timed(lambda i: F.gelu(xs[i][:, :d], approximate="tanh") * xs[i][:, d:], c),
                   nb * 1.5)
            del xs


def models_page_copy():
    """The append has no eager equivalent: a device copy of its bytes (bf16 cache: k and v rows
    read and written) at the large token counts."""
    for nnz in (2048, 16384):
        for heads in (1, 2, 4, 8):
            for d in (64, 128, 256):
                src = rand(2 * nnz, heads, d)
                dst = torch.empty_like(src)
                report("append_copy_ref", f"bf16 nnz {nnz} h {heads} d {d}",
                       timed(lambda i: dst.copy_(src), 1), 2 * src.numel() * 2)


def main():
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    import sys
    if "--models" in sys.argv:
        bench_copy()
        models_norm()
        models_rope()
        models_activation()
        models_page_copy()
        return
    bench_copy()
    bench_norm()
    bench_rope()
    bench_activation()
    bench_page()


if __name__ == "__main__":
    main()
