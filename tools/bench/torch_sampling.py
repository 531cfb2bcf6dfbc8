"""PyTorch sort-based sampling baselines on the shapes of bench_sampling.cc.

B in {1, 64, 256} x V in {128256, 32000}, fp32 probs = softmax of normal logits (std 1 and 5).
Median of CUDA-event-timed runs over rotating inputs, like tools/bench/bench_util.cc. Also times
FlashInfer's kernels when `flashinfer` is importable.
"""
import torch
from torch_timing import median_us as _median_us
from torch_timing import queued_us as _queued_us

ITERS, WARMUP = 50, 5


def median_us(fn, inputs):
    return _median_us(lambda i: fn(inputs[i]), len(inputs), iters=ITERS, warmup=WARMUP)


def queued_us(fn, inputs):
    return _queued_us(lambda i: fn(inputs[i]), len(inputs), iters=ITERS, warmup=WARMUP)


def top_p(probs, p=0.9):
    sorted_p, idx = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sorted_p, dim=-1)
    sorted_p = sorted_p.masked_fill(cum - sorted_p > p, 0.0)
    choice = torch.multinomial(sorted_p, 1)
    return torch.gather(idx, -1, choice)


def top_k(probs, k=50):
    vals, idx = torch.topk(probs, k, dim=-1)
    return torch.gather(idx, -1, torch.multinomial(vals, 1))


def min_p(probs, mp=0.1):
    mx = probs.max(dim=-1, keepdim=True).values
    return torch.multinomial(probs.masked_fill(probs < mp * mx, 0.0), 1)


def joint(probs, k=50, p=0.9):
    vals, idx = torch.topk(probs, k, dim=-1)  # sorted, descending
    vals = vals / vals.sum(-1, keepdim=True)
    cum = torch.cumsum(vals, dim=-1)
    vals = vals.masked_fill(cum - vals > p, 0.0)
    return torch.gather(idx, -1, torch.multinomial(vals, 1))


def plain(probs):
    return torch.multinomial(probs, 1)


def main():
    dev = torch.device("cuda")
    ops = {"sample": plain, "top_k50": top_k, "top_p0.9": top_p, "min_p0.1": min_p,
           "top_k50_top_p0.9": joint}
    try:
        import flashinfer.sampling as fs  # noqa: F401
        ops.update({
            "flashinfer_top_p0.9": lambda x: fs.top_p_sampling_from_probs(x, 0.9),
            "flashinfer_top_k50": lambda x: fs.top_k_sampling_from_probs(x, 50),
            "flashinfer_min_p0.1": lambda x: fs.min_p_sampling_from_probs(x, 0.1),
            "flashinfer_joint": lambda x: fs.top_k_top_p_sampling_from_probs(x, 50, 0.9),
        })
    except Exception as e:  # not installed on the device machine
        print(f"flashinfer not available: {type(e).__name__}")
    print(f"{'op':<24} {'shape':<28} {'us':>9} {'queued us':>9}")
    for vocab in (128256, 32000):
        for batch in (1, 64, 256):
            for std in (1.0, 5.0):
                g = torch.Generator(device=dev).manual_seed(1234 + batch)
                nbytes = batch * vocab * 4
                copies = min(8, (160 << 20) // nbytes + 1)
                inputs = [torch.softmax(torch.randn(batch, vocab, device=dev, generator=g) * std, -1)
                          for _ in range(copies)]
                for name, fn in ops.items():
                    us = median_us(fn, inputs)
                    qu = queued_us(fn, inputs)
                    print(f"torch_{name:<18} B={batch} V={vocab} std{int(std):<10} {us:9.2f} "
                          f"{qu:9.2f}", flush=True)


if __name__ == "__main__":
    main()
