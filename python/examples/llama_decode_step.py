"""One decode step of a Llama-3.1-8B-shaped layer, FlashInfer-style, entirely through flashjit's
Python package, checked against PyTorch (fp32 references from the same inputs).

  input rmsnorm -> qkv proj -> Llama 3.1 RoPE -> append K/V to the paged cache -> batch decode
  attention (plan/run) -> o proj -> fused add + rmsnorm -> gate/up -> silu_and_mul -> down ->
  fused add + final rmsnorm -> lm head -> softmax -> top-k/top-p sampling

Usage: python3 llama_decode_step.py [--batch 16]   (needs PyTorch and a CUDA GPU)
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

import flashjit  # noqa: E402

HIDDEN, HQ, HKV, D, INTER, VOCAB, PAGE = 4096, 32, 8, 128, 14336, 128256, 16
EPS = 1e-5


def llama31_freqs(dev):
    f = 1.0 / 5e5 ** (torch.arange(0, D, 2, device=dev).double() / D)
    wavelen = 2 * math.pi / f
    smooth = (8192 / wavelen - 1.0) / (4.0 - 1.0)
    mid = (1 - smooth) * f / 8.0 + smooth * f
    return torch.where(wavelen < 8192 / 4.0, f, torch.where(wavelen > 8192 / 1.0, f / 8.0, mid))


def rope_ref(x, pos, freqs):
    ang = pos.double()[:, None] * freqs[None, :]
    cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]
    a, b = x.double()[..., : D // 2], x.double()[..., D // 2:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)


def rms_ref(x, w):
    x = x.double()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w.double()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    dev, bf = "cuda:0", torch.bfloat16
    torch.manual_seed(0)
    B = args.batch
    g = lambda *s, scale=0.02: (torch.randn(*s, device=dev) * scale).to(bf)  # noqa: E731
    w_in, w_post, w_final = g(HIDDEN, scale=1) + 1, g(HIDDEN, scale=1) + 1, g(HIDDEN, scale=1) + 1
    w_qkv, w_o = g(HIDDEN, (HQ + 2 * HKV) * D), g(HQ * D, HIDDEN)
    w_gu, w_down, w_lm = g(HIDDEN, 2 * INTER), g(INTER, HIDDEN), g(HIDDEN, VOCAB)

    # The paged KV cache: B requests with their existing lengths; the new token goes at len.
    old_lens = [int(x) for x in torch.randint(1, 2000, (B,)).tolist()]
    old_lens[0], old_lens[1] = 15, 16  # the new token lands at a page's end / starts a new page
    new_lens = [n + 1 for n in old_lens]
    pages = [-(-n // PAGE) for n in new_lens]
    indptr = [0]
    for p in pages:
        indptr.append(indptr[-1] + p)
    num_pages = indptr[-1] + 8
    kv_indices = torch.randperm(num_pages, device=dev)[: indptr[-1]].int()
    kv_indptr = torch.tensor(indptr, dtype=torch.int32, device=dev)
    kv_last = torch.tensor([(n - 1) % PAGE + 1 for n in new_lens], dtype=torch.int32, device=dev)
    k_cache = torch.randn(num_pages, PAGE, HKV, D, device=dev).to(bf)
    v_cache = torch.randn(num_pages, PAGE, HKV, D, device=dev).to(bf)
    k_cache_ref, v_cache_ref = k_cache.clone(), v_cache.clone()
    x = torch.randn(B, HIDDEN, device=dev).to(bf)
    x_in = x.clone()
    seq_lens = torch.tensor(new_lens, dtype=torch.int32, device=dev)
    append_indptr = torch.arange(B + 1, dtype=torch.int32, device=dev)
    workspace = torch.empty(128 << 20, dtype=torch.uint8, device=dev)
    wrapper = flashjit.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD")

    # ---- flashjit, FlashInfer-style ----
    residual = x
    h = flashjit.rmsnorm(residual, w_in, EPS)
    qkv = h @ w_qkv
    q = qkv[:, : HQ * D].reshape(B, HQ, D)
    k = qkv[:, HQ * D: (HQ + HKV) * D].reshape(B, HKV, D)
    v = qkv[:, (HQ + HKV) * D:].reshape(B, HKV, D)
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    q_pre, k_pre = q.clone(), k.clone()
    batch_indices, positions = flashjit.get_batch_indices_positions(append_indptr, seq_lens, B)
    flashjit.apply_llama31_rope_pos_ids_inplace(q, k, positions)
    flashjit.append_paged_kv_cache(k, v, batch_indices, positions, (k_cache, v_cache), kv_indices,
                                   kv_indptr, kv_last, "NHD")
    wrapper.plan(kv_indptr, kv_indices, kv_last, HQ, HKV, D, PAGE, q_data_type=bf)
    attn = wrapper.run(q, (k_cache, v_cache))
    o = attn.reshape(B, HQ * D) @ w_o
    flashjit.fused_add_rmsnorm(o, residual, w_post, EPS)  # residual += o; o = norm(residual)
    act = flashjit.silu_and_mul(o @ w_gu)
    down = act @ w_down
    flashjit.fused_add_rmsnorm(down, residual, w_final, EPS)
    logits = (down @ w_lm).float()
    probs = flashjit.softmax(logits, temperature=0.7)
    tokens = flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9, seed=1234, offset=0)
    torch.cuda.synchronize()

    # ---- PyTorch reference (fp64 where it matters, bf16 roundings where flashjit rounds) ----
    h_r = rms_ref(x_in, w_in).to(bf)
    qkv_r = h_r @ w_qkv
    q_r = qkv_r[:, : HQ * D].reshape(B, HQ, D)
    k_r = qkv_r[:, HQ * D: (HQ + HKV) * D].reshape(B, HKV, D)
    v_r = qkv_r[:, (HQ + HKV) * D:].reshape(B, HKV, D)
    pos = torch.tensor(old_lens, device=dev)
    freqs = llama31_freqs(dev)
    q_r, k_r = rope_ref(q_r, pos, freqs).to(bf), rope_ref(k_r, pos, freqs).to(bf)
    attn_r = torch.empty(B, HQ, D, device=dev, dtype=torch.float64)
    for b in range(B):
        page_ids = kv_indices[indptr[b]: indptr[b + 1]].long()
        kk = k_cache_ref[page_ids].reshape(-1, HKV, D)[: new_lens[b]].double()
        vv = v_cache_ref[page_ids].reshape(-1, HKV, D)[: new_lens[b]].double()
        kk[old_lens[b]], vv[old_lens[b]] = k_r[b].double(), v_r[b].double()
        kk, vv = kk.repeat_interleave(HQ // HKV, 1), vv.repeat_interleave(HQ // HKV, 1)
        s = torch.einsum("hd,nhd->hn", q_r[b].double(), kk) / math.sqrt(D)
        attn_r[b] = torch.einsum("hn,nhd->hd", s.softmax(-1), vv)
    o_r = attn_r.to(bf).reshape(B, HQ * D) @ w_o
    res_r = (o_r.float() + x_in.float()).to(bf)
    o_r = rms_ref(res_r, w_post).to(bf)
    gu = o_r @ w_gu
    act_r = (torch.nn.functional.silu(gu[:, :INTER].float()) * gu[:, INTER:].float()).to(bf)
    down_r = act_r @ w_down
    res_r = (down_r.float() + res_r.float()).to(bf)
    down_r = rms_ref(res_r, w_final).to(bf)
    probs_r = torch.softmax((down_r @ w_lm).float() / 0.7, -1)

    def err(a, b):
        a, b = a.double(), b.double()
        return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()

    checks = [
        ("q after rope", err(q, q_r), 2e-2), ("k after rope", err(k, k_r), 2e-2),
        ("attention out", err(attn, attn_r), 2e-2),
        ("residual after layer", err(residual, res_r), 2e-2),
        ("final hidden", err(down, down_r), 3e-2),
        ("probs", err(probs, probs_r), 5e-2),
    ]
    top50 = probs_r.topk(50, -1).indices
    in_top = sum(int(tokens[b].item() in top50[b].tolist()) for b in range(B))
    # K/V written into the right page slots
    kv_ok = all(
        torch.equal(k_cache[kv_indices[indptr[b] + old_lens[b] // PAGE], old_lens[b] % PAGE], k[b])
        for b in range(B))
    ok = all(e <= tol for _, e, tol in checks) and in_top == B and kv_ok
    print(f"llama-3.1-8B-shaped decode step, batch {B}, kv lens {min(new_lens)}..{max(new_lens)}")
    for name, e, tol in checks:
        print(f"  {name:<22} rel err {e:.2e}  (tol {tol:.0e})  {'ok' if e <= tol else 'FAIL'}")
    print(f"  {'kv append':<22} {'ok' if kv_ok else 'FAIL'}")
    print(f"  {'sampled tokens':<22} {in_top}/{B} in the reference top-50  "
          f"{'ok' if in_top == B else 'FAIL'}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
