"""Where the host time of one flashjit Python call goes, on real PyTorch tensors: each accessor
the packed call path reads, the struct packing, PyTorch's current-stream lookup, a bare ctypes
call, and the whole Python call against a dry-run engine (validation and kernel lookup in the
library, no launch). Median ns per operation over batches of 1000; run on the GPU machine
beside tools/bench/python_overhead.py, whose 'python - C' column this decomposes.

Usage: python3 tools/bench/python_call_parts.py"""
import ctypes
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))


def ns(fn, batches=30, n=1000):
    clock = time.perf_counter_ns
    for _ in range(n):
        fn()
    t = []
    for _ in range(batches):
        t0 = clock()
        for _ in range(n):
            fn()
        t.append((clock() - t0) / n)
    return statistics.median(t)


def main():
    import torch

    import flashjit
    from flashjit import _call, _lib

    x = torch.randn(32, 4096, device="cuda").to(torch.bfloat16)
    w = torch.randn(4096, device="cuda").to(torch.bfloat16)
    out = torch.empty_like(x)
    buf = bytearray(4096)
    pack3 = _call._PACK[2]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    version = ctypes.CDLL(_lib.library_path).flashjit_version
    rows = [
        ("empty loop body (lambda call)", lambda: None),
        ("t.shape", lambda: x.shape),
        ("t.get_device()", lambda: x.get_device()),
        ("t.data_ptr()", lambda: x.data_ptr()),
        ("t.stride()", lambda: x.stride()),
        ("t.dtype", lambda: x.dtype),
        ("struct pack_into (one 2-D tensor record)",
         lambda: pack3(buf, 152, 1, 2, 0, 2, 3, 32, 4096, 4096, 1)),
        ("torch._C._cuda_getCurrentRawStream(0)", (lambda: raw(0)) if raw else (lambda: None)),
        ("torch.cuda.current_stream().cuda_stream", lambda: torch.cuda.current_stream().cuda_stream),
        ("ctypes call of flashjit_version()", lambda: version()),
        ("torch.empty_like(x)", lambda: torch.empty_like(x)),
    ]
    cache = tempfile.mkdtemp(prefix="flashjit-parts-")
    dry = flashjit.Engine(dry_run=True, arch="sm_90a", cache_dir=cache, read_environment=False)
    flashjit.set_default_engine(dry)
    flashjit.rmsnorm(x, w, 1e-5, out=out)  # compiles once (NVRTC), then cache-hot
    rows.append(("flashjit.rmsnorm, dry-run engine (everything but the launch)",
                 lambda: flashjit.rmsnorm(x, w, 1e-5, out=out)))
    print(f"{'part':<64} {'ns':>8}")
    for name, fn in rows:
        print(f"{name:<64} {ns(fn):8.0f}", flush=True)
    api = [n for n in ("__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__")
           if hasattr(torch.Tensor, n)]
    print(f"torch {torch.__version__}: DLPack C exchange API on torch.Tensor: {api or 'none'}")
    if _call.fast is not None:
        print(f"extension's tensor read after the rows above: {_call.fast.exchange_api_state()}")


if __name__ == "__main__":
    main()
