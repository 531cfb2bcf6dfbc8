"""Host overhead of one flashjit Python call per op (median us, cache-hot) against a bare C call
of the same op (tools/bench/c_overhead.c, same shapes: a Llama-3.1-8B decode step, batch 32).

Both sides launch on the NULL/current stream and synchronise every 32 calls outside the timed
region, so only the host time of the call is measured. The Python calls pass out= buffers (no
allocation, as the C side); "alloc" rows add FlashInfer's allocating form.

Usage: python3 tools/bench/python_overhead.py [--iters N] [--c-bench PATH]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import flashjit  # noqa: E402

B, HIDDEN, INTER, HQ, HKV, D, PAGE, KV_LEN, VOCAB = 32, 4096, 14336, 32, 8, 128, 16, 1024, 128256
PAGES = B * (KV_LEN // PAGE)


def timed(fn, iters):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t = []
    clock = time.perf_counter_ns
    for i in range(iters):
        t0 = clock()
        fn()
        t.append((clock() - t0) / 1e3)
        if i % 32 == 31:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    t.sort()
    return statistics.median(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--c-bench", default=os.environ.get(
        "FLASHJIT_C_OVERHEAD", os.path.join(ROOT, "build-api", "tests", "c_api",
                                            "flashjit_c_overhead")))
    args = ap.parse_args()
    dev, bf, i32 = "cuda:0", torch.bfloat16, torch.int32
    e = lambda *s, dt=bf: torch.randn(*s, device=dev).to(dt)  # noqa: E731
    x, res, out, w = e(B, HIDDEN), e(B, HIDDEN), e(B, HIDDEN), e(HIDDEN)
    act_in, act_out = e(B, 2 * INTER), e(B, INTER)
    q, k = e(B, HQ, D), e(B, HKV, D)
    pos = torch.full((B,), KV_LEN - 1, dtype=i32, device=dev)
    ak, av = e(B, HKV, D), e(B, HKV, D)
    bidx = torch.arange(B, dtype=i32, device=dev)
    kc, vc = e(PAGES, PAGE, HKV, D), e(PAGES, PAGE, HKV, D)
    kv_idx = torch.arange(PAGES, dtype=i32, device=dev)
    kv_ptr = torch.arange(B + 1, dtype=i32, device=dev) * (KV_LEN // PAGE)
    kv_last = torch.full((B,), PAGE, dtype=i32, device=dev)
    dq, dout, dk, dv = e(HQ, D), e(HQ, D), e(KV_LEN, HKV, D), e(KV_LEN, HKV, D)
    bq, bout = e(B, HQ, D), e(B, HQ, D)
    probs = torch.softmax(torch.randn(B, VOCAB, device=dev), -1)
    samples = torch.empty(B, dtype=i32, device=dev)
    ws = torch.empty(128 << 20, dtype=torch.uint8, device=dev)
    wrapper = flashjit.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
    wrapper.plan(kv_ptr, kv_idx, kv_last, HQ, HKV, D, PAGE, q_data_type=bf)

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
    alloc = {
        "rmsnorm (alloc)": lambda: flashjit.rmsnorm(x, w, 1e-5),
        "top_k_top_p_sampling_from_probs (alloc)":
            lambda: flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9),
        "batch_decode_run (alloc)": lambda: wrapper.run(bq, (kc, vc)),
    }
    py = {name: timed(fn, args.iters) for name, fn in {**ops, **alloc}.items()}
    c = {}
    if os.path.exists(args.c_bench):
        env = dict(os.environ)
        r = subprocess.run([args.c_bench, "--iters", str(args.iters)], capture_output=True,
                           text=True, env=env)
        for line in r.stdout.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                c[row["op"]] = row["median_us"]
        if r.returncode:
            print(r.stderr, file=sys.stderr)
    else:
        print(f"(no C benchmark at {args.c_bench})", file=sys.stderr)
    print(f"{'op':<42} {'python us':>10} {'C us':>8} {'ratio':>6}")
    rows = []
    for name, t in py.items():
        base = c.get(name.replace(" (alloc)", ""))
        ratio = t / base if base else float("nan")
        rows.append({"op": name, "python_us": t, "c_us": base, "ratio": ratio})
        print(f"{name:<42} {t:>10.2f} {base if base else float('nan'):>8.2f} {ratio:>6.2f}")
    print(json.dumps({"rows": rows, "gpu": torch.cuda.get_device_name(0),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
