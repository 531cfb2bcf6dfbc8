"""Host overhead of one flashjit Python call per op (median us, cache-hot) against a bare C call
of the same op (tools/bench/c_overhead.c, same shapes: a Llama-3.1-8B decode step, batch 32).

GPU mode (default): PyTorch tensors on cuda:0; both sides launch on the NULL/current stream and
synchronise every 32 calls outside the timed region, so only the host time of the call is
measured. The Python calls pass out= buffers (no allocation, as the C side); "alloc" rows add
FlashInfer's allocating form.

--dry-run (a CPU machine, no PyTorch needed): a dry-run engine for sm_90a validates and looks
up each kernel but launches nothing; the Python side passes stand-ins for torch.Tensor
(tests/python/fake_torch.py: the same accessors, implemented in Python) through the same packing
code; the C side is flashjit_c_overhead --dry-run. Both then time thread CPU time over
batches of 32 calls (robust on a busy build machine). This isolates the host cost of the Python
layer (packing, the ctypes call) from cuLaunchKernel; the accessors of real torch tensors are
C functions and usually a little cheaper than the stand-ins'.

The package's C call path (_flashjit_fast.abi3.so) is used when found; FLASHJIT_PYTHON_FAST=0
times the Python/ctypes path instead (the path used is printed and in the JSON's "call_path").

The host is noisy from run to run (a single run read 1.1-2.7x for the same op on one machine):
--repeat N (default 5) alternates N Python runs and N C runs and reports, per op, the median of
the N per-run medians of each side, their ratio, and the range of the N per-run ratios.

Usage: python3 tools/bench/python_overhead.py [--dry-run] [--iters N] [--repeat N] [--c-bench PATH]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# FLASHJIT_PYTHON_DIR: time another copy of the package (A/B of two versions on one machine).
sys.path.insert(0, os.environ.get("FLASHJIT_PYTHON_DIR") or os.path.join(ROOT, "python"))

B, HIDDEN, INTER, HQ, HKV, D, PAGE, KV_LEN, VOCAB = 32, 4096, 14336, 32, 8, 128, 16, 1024, 128256
PAGES = B * (KV_LEN // PAGE)


def timed_cpu(fn, iters, sync):
    """Dry run: median over batches of 32 calls of this thread's CPU time per call (a loaded
    build machine then adds little: time spent descheduled is not counted)."""
    for _ in range(20):
        fn()
    clock = time.thread_time_ns
    t = []
    for _ in range(max(1, iters // 32)):
        t0 = clock()
        for _ in range(32):
            fn()
        t.append((clock() - t0) / 32e3)
    return statistics.median(t)


def timed(fn, iters, sync):
    for _ in range(20):
        fn()
    sync()
    t = []
    clock = time.perf_counter_ns
    for i in range(iters):
        t0 = clock()
        fn()
        t.append((clock() - t0) / 1e3)
        if i % 32 == 31:
            sync()
    sync()
    return statistics.median(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5,
                    help="alternating Python and C runs; per op the median of the runs' medians")
    ap.add_argument("--dry-run", action="store_true",
                    help="CPU machine: dry-run engine, torch.Tensor stand-ins, C side --dry-run")
    ap.add_argument("--c-bench", default=os.environ.get(
        "FLASHJIT_C_OVERHEAD", os.path.join(ROOT, "build-api", "tests", "c_api",
                                            "flashjit_c_overhead")))
    args = ap.parse_args()
    import flashjit  # noqa: E402

    if args.dry_run:
        sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
        import fake_torch  # noqa: E402
        fake_torch.use_fake_torch()
        cache = os.environ.get("FLASHJIT_CACHE_DIR") or tempfile.mkdtemp(prefix="flashjit-oh-")
        flashjit.set_default_engine(flashjit.Engine(dry_run=True, arch="sm_90a", cache_dir=cache,
                                                    read_environment=False))

        def e(*shape, dt="bfloat16"):
            return fake_torch.t(*shape, dtype=dt)

        def i32(*shape, fill=None):
            return fake_torch.t(*shape, dtype="int32")

        def sync():
            pass

        bf, f32, u8 = "bfloat16", "float32", "uint8"
        info = {"mode": "dry-run (CPU, torch.Tensor stand-ins)"}
    else:
        import torch  # noqa: E402
        dev = "cuda:0"
        bf, f32, u8 = torch.bfloat16, torch.float32, torch.uint8

        def e(*shape, dt=bf):
            return torch.randn(*shape, device=dev).to(dt)

        def i32(*shape, fill=None):
            return torch.zeros(*shape, dtype=torch.int32, device=dev)

        sync = torch.cuda.synchronize
        info = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}

    x, res, out, w = e(B, HIDDEN), e(B, HIDDEN), e(B, HIDDEN), e(HIDDEN)
    act_in, act_out = e(B, 2 * INTER), e(B, INTER)
    q, k = e(B, HQ, D), e(B, HKV, D)
    pos = i32(B)
    ak, av = e(B, HKV, D), e(B, HKV, D)
    bidx = i32(B)
    kc, vc = e(PAGES, PAGE, HKV, D), e(PAGES, PAGE, HKV, D)
    kv_idx, kv_ptr, kv_last = i32(PAGES), i32(B + 1), i32(B)
    if not args.dry_run:
        pos.fill_(KV_LEN - 1)
        bidx.copy_(torch.arange(B, dtype=torch.int32))
        kv_idx.copy_(torch.arange(PAGES, dtype=torch.int32))
        kv_ptr.copy_(torch.arange(B + 1, dtype=torch.int32) * (KV_LEN // PAGE))
        kv_last.fill_(PAGE)
    dq, dout, dk, dv = e(HQ, D), e(HQ, D), e(KV_LEN, HKV, D), e(KV_LEN, HKV, D)
    bq, bout = e(B, HQ, D), e(B, HQ, D)
    probs = e(B, VOCAB, dt=f32)
    if not args.dry_run:
        probs = torch.softmax(probs, -1)
    samples = i32(B)
    ws = e(128 << 20, dt=u8) if args.dry_run else torch.empty(128 << 20, dtype=u8, device=dev)
    wrapper = flashjit.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
    host_ptr = [i * (KV_LEN // PAGE) for i in range(B + 1)]
    wrapper.plan(host_ptr, kv_idx, [PAGE] * B, HQ, HKV, D, PAGE, q_data_type="bfloat16")

    ops = {
        "rmsnorm": lambda: flashjit.rmsnorm(x, w, 1e-5, out=out),
        "fused_add_rmsnorm": lambda: flashjit.fused_add_rmsnorm(x, res, w, 1e-5),
        "silu_and_mul": lambda: flashjit.silu_and_mul(act_in, out=act_out),
        "apply_llama31_rope_pos_ids_inplace":
            lambda: flashjit.apply_llama31_rope_pos_ids_inplace(q, k, pos),
        "append_paged_kv_cache": lambda: flashjit.append_paged_kv_cache(
            ak, av, bidx, pos, (kc, vc), kv_idx, kv_ptr, kv_last),
        "single_decode_with_kv_cache":
            lambda: flashjit.single_decode_with_kv_cache(dq, dk, dv, out=dout),
        "batch_decode_run": lambda: wrapper.run(bq, (kc, vc), out=bout),
        "top_k_top_p_sampling_from_probs": lambda: flashjit.top_k_top_p_sampling_from_probs(
            probs, 50, 0.9, seed=1234, offset=0, out=samples),
    }
    if not args.dry_run:
        ops.update({
            "rmsnorm (alloc)": lambda: flashjit.rmsnorm(x, w, 1e-5),
            "top_k_top_p_sampling_from_probs (alloc)":
                lambda: flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9),
            "batch_decode_run (alloc)": lambda: wrapper.run(bq, (kc, vc)),
        })
    info["call_path"] = flashjit._call.fast_path or "python (ctypes)"
    print(f"call path: {info['call_path']}", file=sys.stderr)
    timer = timed_cpu if args.dry_run else timed
    fast = flashjit._call.fast
    if fast is not None and hasattr(fast, "exchange_api_state"):
        # How the extension read the tensors: "on" = the DLPack C exchange API of the tensor
        # type (checked against the accessors), "off" = the accessors.
        info["tensor_read"] = fast.exchange_api_state()
        print(f"tensor read: {info['tensor_read']}", file=sys.stderr)

    def c_run():
        c = {}
        cmd = [args.c_bench, "--iters", str(args.iters)] + (["--dry-run"] if args.dry_run else [])
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
        for line in r.stdout.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                c[row["op"]] = row["median_us"]
        if r.returncode:
            print(r.stderr, file=sys.stderr)
        return c

    have_c = os.path.exists(args.c_bench)
    if not have_c:
        print(f"(no C benchmark at {args.c_bench})", file=sys.stderr)
    py_runs, c_runs = [], []
    for _ in range(max(1, args.repeat)):
        py_runs.append({name: timer(fn, args.iters, sync) for name, fn in ops.items()})
        if have_c:
            c_runs.append(c_run())
    py = {name: statistics.median(r[name] for r in py_runs) for name in ops}
    c = {name: statistics.median(r[name] for r in c_runs)
         for name in (set.intersection(*(set(r) for r in c_runs)) if c_runs else set())}

    def ratio_range(name):
        base = name.replace(" (alloc)", "")
        rs = [p[name] / q[base] for p, q in zip(py_runs, c_runs) if q.get(base)]
        return (min(rs), max(rs)) if rs else (float("nan"), float("nan"))

    info["repeat"] = len(py_runs)
    print(f"medians of {len(py_runs)} alternating runs per side")
    print(f"{'op':<42} {'python us':>10} {'C us':>8} {'ratio':>6} {'py - C':>7} {'run ratios':>12}")
    rows = []
    for name, t in py.items():
        base = c.get(name.replace(" (alloc)", ""))
        ratio = t / base if base else float("nan")
        lo, hi = ratio_range(name)
        rows.append({"op": name, "python_us": t, "c_us": base, "ratio": ratio,
                     "run_ratio_min": lo, "run_ratio_max": hi})
        print(f"{name:<42} {t:>10.2f} {base if base else float('nan'):>8.2f} {ratio:>6.2f} "
              f"{t - base if base else float('nan'):>7.2f} {lo:>5.2f}-{hi:<5.2f}")
    for name in sorted(set(c) - set(py)):
        print(f"{name:<42} {'':>10} {c[name]:>8.2f}   (C only)")
    print(json.dumps({"rows": rows, "c_only": {k: v for k, v in c.items() if k not in py},
                      **info}))


if __name__ == "__main__":
    main()
