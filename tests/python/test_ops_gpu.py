"""The Python package on a GPU against PyTorch references (fp32). Skipped without PyTorch or
CUDA. Shapes mostly match tools/bench (Llama-3.1-8B: hidden 4096, 32/8 heads, head_dim 128) so
that the prewarmed cache covers them."""

import math

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import flashjit  # noqa: E402

DEV = "cuda:0"


def close(a, b, tol=2e-2):
    torch.testing.assert_close(a.float(), b.float(), rtol=tol, atol=tol)


def rms_ref(x, w, eps, gemma=False):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return y * ((w.float() + 1) if gemma else w.float())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_rmsnorm(dtype):
    torch.manual_seed(0)
    x = torch.randn(32, 4096, dtype=dtype, device=DEV)
    w = torch.randn(4096, dtype=dtype, device=DEV)
    close(flashjit.rmsnorm(x, w, eps=1e-5), rms_ref(x, w, 1e-5))
    close(flashjit.gemma_rmsnorm(x, w, eps=1e-5), rms_ref(x, w, 1e-5, gemma=True))
    out = torch.full_like(x, float("nan"))
    assert flashjit.norm.rmsnorm(x, w, 1e-5, out=out) is out
    close(out, rms_ref(x, w, 1e-5))


def test_rmsnorm_3d_and_strided():
    x = torch.randn(8, 4, 128, dtype=torch.bfloat16, device=DEV)
    w = torch.randn(128, dtype=torch.bfloat16, device=DEV)
    close(flashjit.rmsnorm(x, w), rms_ref(x, w, 1e-6))
    big = torch.randn(32, 8192, dtype=torch.bfloat16, device=DEV)
    xs = big[:, :4096]  # rows strided
    w2 = torch.randn(4096, dtype=torch.bfloat16, device=DEV)
    close(flashjit.rmsnorm(xs, w2), rms_ref(xs, w2, 1e-6))


def test_fused_add_rmsnorm():
    x = torch.randn(32, 4096, dtype=torch.bfloat16, device=DEV)
    r = torch.randn(32, 4096, dtype=torch.bfloat16, device=DEV)
    w = torch.randn(4096, dtype=torch.bfloat16, device=DEV)
    r_ref = (x.float() + r.float()).to(torch.bfloat16)
    x_ref = rms_ref(r_ref, w, 1e-5)
    assert flashjit.fused_add_rmsnorm(x, r, w, eps=1e-5) is None
    close(r, r_ref)
    close(x, x_ref)


def test_layernorm():
    x = torch.randn(16, 4096, dtype=torch.bfloat16, device=DEV)
    g = torch.randn(4096, dtype=torch.float32, device=DEV)
    b = torch.randn(4096, dtype=torch.float32, device=DEV)
    ref = torch.nn.functional.layer_norm(x.float(), (4096,), g, b, 1e-6)
    close(flashjit.layernorm(x, g, b, 1e-6), ref)


@pytest.mark.parametrize("name,fn", [
    ("silu_and_mul", lambda a: torch.nn.functional.silu(a)),
    ("gelu_and_mul", lambda a: torch.nn.functional.gelu(a)),
    ("gelu_tanh_and_mul", lambda a: torch.nn.functional.gelu(a, approximate="tanh")),
])
def test_activation(name, fn):
    x = torch.randn(32, 2 * 14336, dtype=torch.bfloat16, device=DEV)
    d = 14336
    ref = fn(x[:, :d].float()) * x[:, d:].float()
    close(getattr(flashjit, name)(x), ref)


def rope_ref(x, pos, theta, scale=1.0, freqs=None):
    d = x.shape[-1]
    if freqs is None:
        freqs = 1.0 / (scale * theta ** (torch.arange(0, d, 2, device=x.device).double() / d))
    ang = pos.double()[:, None] * freqs[None, :]  # (nnz, d/2)
    cos, sin = ang.cos()[:, None, :], ang.sin()[:, None, :]
    a, b = x.double()[..., : d // 2], x.double()[..., d // 2:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)


def llama31_freqs(d, theta, scale, low, high, old):
    f = 1.0 / theta ** (torch.arange(0, d, 2, device=DEV).double() / d)
    wavelen = 2 * math.pi / f
    smooth = (old / wavelen - low) / (high - low)
    out = torch.where(wavelen < old / high, f, (1 - smooth) * f / scale + smooth * f)
    return torch.where(wavelen > old / low, f / scale, out)


def test_rope_pos_ids_and_llama31():
    q = torch.randn(32, 32, 128, dtype=torch.bfloat16, device=DEV)
    k = torch.randn(32, 8, 128, dtype=torch.bfloat16, device=DEV)
    pos = torch.randint(0, 4000, (32,), dtype=torch.int32, device=DEV)
    qr, kr = flashjit.apply_rope_pos_ids(q, k, pos, rope_theta=1e4)
    close(qr, rope_ref(q, pos, 1e4))
    close(kr, rope_ref(k, pos, 1e4))
    f = llama31_freqs(128, 5e5, 8.0, 1.0, 4.0, 8192)
    q2, k2 = q.clone(), k.clone()
    flashjit.apply_llama31_rope_pos_ids_inplace(q2, k2, pos)
    close(q2, rope_ref(q, pos, 0, freqs=f))
    close(k2, rope_ref(k, pos, 0, freqs=f))


def test_rope_ragged_and_cos_sin_cache():
    q = torch.randn(10, 32, 128, dtype=torch.bfloat16, device=DEV)
    k = torch.randn(10, 8, 128, dtype=torch.bfloat16, device=DEV)
    indptr = torch.tensor([0, 3, 10], dtype=torch.int32, device=DEV)
    offsets = torch.tensor([5, 100], dtype=torch.int32, device=DEV)
    pos = torch.tensor([5, 6, 7] + list(range(100, 107)), dtype=torch.int32, device=DEV)
    qr, kr = flashjit.apply_rope(q, k, indptr, offsets)
    close(qr, rope_ref(q, pos, 1e4))
    freqs = 1.0 / (1e4 ** (torch.arange(0, 128, 2, device=DEV).float() / 128))
    ang = torch.arange(256, device=DEV).float()[:, None] * freqs[None, :]
    cache = torch.cat([ang.cos(), ang.sin()], -1)
    qo, ko = flashjit.apply_rope_with_cos_sin_cache(pos, q.reshape(10, -1), k.reshape(10, -1),
                                                    128, cache, is_neox=True)
    close(qo.reshape(10, 32, 128), rope_ref(q, pos, 1e4))


def make_paged(batch_lens, page_size=16, hkv=8, d=128, dtype=torch.bfloat16, extra_pages=7,
               dev=DEV):
    pages = [max(1, -(-n // page_size)) if n else 0 for n in batch_lens]
    total = sum(pages) + extra_pages
    perm = torch.randperm(total, device=dev).int()
    indptr = [0]
    for p in pages:
        indptr.append(indptr[-1] + p)
    indices = perm[: indptr[-1]].contiguous()
    last = [(n - 1) % page_size + 1 if n else 0 for n in batch_lens]
    kc = torch.randn(total, page_size, hkv, d, dtype=dtype, device=dev)
    vc = torch.randn(total, page_size, hkv, d, dtype=dtype, device=dev)
    return (torch.tensor(indptr, dtype=torch.int32, device=dev), indices,
            torch.tensor(last, dtype=torch.int32, device=dev), kc, vc)


def gather_kv(cache, indptr, indices, b, n, page_size=16):
    pages = indices[indptr[b]: indptr[b + 1]].long()
    return cache[pages].reshape(-1, *cache.shape[2:])[:n]


def test_append_paged_kv_cache_and_positions():
    lens = [17, 1, 32, 100]
    indptr, indices, last, kc, vc = make_paged(lens)
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=DEV)
    append_indptr = torch.tensor([0, 2, 3, 5, 6], dtype=torch.int32, device=DEV)
    bi, pos = flashjit.get_batch_indices_positions(append_indptr, seq_lens, 6)
    assert bi.tolist() == [0, 0, 1, 2, 2, 3]
    assert pos.tolist() == [15, 16, 0, 30, 31, 99]
    ak = torch.randn(6, 8, 128, dtype=torch.bfloat16, device=DEV)
    av = torch.randn(6, 8, 128, dtype=torch.bfloat16, device=DEV)
    flashjit.append_paged_kv_cache(ak, av, bi, pos, (kc, vc), indices, indptr, last)
    for j in range(6):
        b, p = bi[j].item(), pos[j].item()
        page = indices[indptr[b] + p // 16].item()
        assert torch.equal(kc[page, p % 16], ak[j]) and torch.equal(vc[page, p % 16], av[j])
    sl = flashjit.get_seq_lens(indptr, last, 16)
    assert sl.tolist() == lens


def attention_ref(q, k, v, sm_scale=None):
    """q [Hq, D], k/v [n, Hkv, D] -> out [Hq, D], lse base 2 [Hq]."""
    hq, d = q.shape
    g = hq // k.shape[1]
    kk = k.double().repeat_interleave(g, dim=1)  # (n, Hq, D)
    vv = v.double().repeat_interleave(g, dim=1)
    s = torch.einsum("hd,nhd->hn", q.double(), kk) * (sm_scale or 1 / math.sqrt(d))
    out = torch.einsum("hn,nhd->hd", s.softmax(-1), vv)
    return out, torch.logsumexp(s, -1) / math.log(2)


def test_single_decode():
    q = torch.randn(32, 128, dtype=torch.bfloat16, device=DEV)
    k = torch.randn(1000, 8, 128, dtype=torch.bfloat16, device=DEV)
    v = torch.randn(1000, 8, 128, dtype=torch.bfloat16, device=DEV)
    out, lse = flashjit.single_decode_with_kv_cache(q, k, v, return_lse=True)
    ref, lse_ref = attention_ref(q, k, v)
    close(out, ref)
    close(lse, lse_ref, 1e-2)


def test_batch_decode_paged():
    lens = [1, 15, 16, 17, 300, 1024, 33, 5]
    indptr, indices, last, kc, vc = make_paged(lens)
    ws = torch.empty(128 << 20, dtype=torch.uint8, device=DEV)
    w = flashjit.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
    w.plan(indptr, indices, last, 32, 8, 128, 16, q_data_type=torch.bfloat16)
    q = torch.randn(len(lens), 32, 128, dtype=torch.bfloat16, device=DEV)
    out, lse = w.run(q, (kc, vc), return_lse=True)
    combined = torch.stack([kc, vc], 1)
    out2 = w.run(q, combined)
    for b, n in enumerate(lens):
        ref, lref = attention_ref(q[b], gather_kv(kc, indptr, indices, b, n),
                                  gather_kv(vc, indptr, indices, b, n))
        close(out[b], ref)
        close(out2[b], ref)
        close(lse[b], lref, 1e-2)


def capture(fn):
    """A CUDA graph of fn() on the current device, after one warm-up call outside the capture.
    The capture gets a stream of its own: torch.cuda.graph's default capture stream is made
    once per process on the device current at its first use, so a capture on another device
    earlier in the session (test_multi_gpu) would otherwise capture nothing here."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=torch.cuda.Stream()):
        fn()
    return g


def test_batch_decode_cuda_graph():
    lens = [40, 7, 129]
    indptr, indices, last, kc, vc = make_paged(lens, extra_pages=40)
    ws = torch.empty(128 << 20, dtype=torch.uint8, device=DEV)
    ip_buf = torch.empty(9, dtype=torch.int32, device=DEV)
    idx_buf = torch.empty(kc.shape[0], dtype=torch.int32, device=DEV)
    lp_buf = torch.empty(8, dtype=torch.int32, device=DEV)
    w = flashjit.CUDAGraphBatchDecodeWithPagedKVCacheWrapper(ws, ip_buf, idx_buf, lp_buf, "NHD")
    w.plan(indptr, indices, last, 32, 8, 128, 16, q_data_type=torch.bfloat16)
    q = torch.randn(8, 32, 128, dtype=torch.bfloat16, device=DEV)
    out = torch.zeros_like(q)
    g = capture(lambda: w.run(q, (kc, vc), out=out))
    for lens2 in (lens, [200, 3, 1, 64]):
        indptr, indices2, last = make_paged(lens2, extra_pages=0)[:3]
        indices2 = indices2 % kc.shape[0]
        w.plan(indptr, indices2, last, 32, 8, 128, 16, q_data_type=torch.bfloat16)
        g.replay()
        torch.cuda.synchronize()
        for b, n in enumerate(lens2):
            ref, _ = attention_ref(q[b], gather_kv(kc, indptr, indices2, b, n),
                                   gather_kv(vc, indptr, indices2, b, n))
            close(out[b], ref)


def test_sampling():
    torch.manual_seed(1)
    logits = torch.randn(32, 128256, device=DEV) * 3
    probs = torch.softmax(logits, -1)
    close(flashjit.softmax(logits), probs, 1e-5)
    close(flashjit.softmax(logits, temperature=0.5), torch.softmax(logits / 0.5, -1), 1e-5)
    s1 = flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9, seed=7, offset=0)
    s2 = flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9, seed=7, offset=0)
    assert torch.equal(s1, s2) and s1.dtype == torch.int32
    top50 = probs.topk(50, -1).indices
    assert all(s1[i].item() in top50[i].tolist() for i in range(32))
    onehot = torch.zeros(4, 1000, device=DEV)
    onehot[torch.arange(4), torch.tensor([3, 999, 0, 500])] = 1
    assert flashjit.sampling_from_probs(onehot).tolist() == [3, 999, 0, 500]
    k_arr = torch.full((32,), 10, dtype=torch.int32, device=DEV)
    s3 = flashjit.top_k_sampling_from_probs(probs, k_arr)
    top10 = probs.topk(10, -1).indices
    assert all(s3[i].item() in top10[i].tolist() for i in range(32))
    masked = flashjit.top_k_mask_logits(logits, 5)
    assert ((masked > -float("inf")).sum(-1) == 5).all()
    renorm = flashjit.top_p_renorm_probs(probs, 0.5)
    close(renorm.sum(-1), torch.ones(32, device=DEV), 1e-4)


def merge_ref(vs, ss):
    """fp64 merge of states stacked on dim 1: v [seq, n, heads, d], s [seq, n, heads]."""
    s = ss.double()
    m = s.amax(dim=1, keepdim=True)
    m = torch.where(torch.isinf(m) & (m < 0), torch.zeros_like(m), m)
    w = torch.exp2(s - m)
    den = w.sum(dim=1)
    v = (vs.double() * w.unsqueeze(-1)).sum(dim=1) / den.unsqueeze(-1).clamp_min(1e-300)
    lse = m.squeeze(1) + torch.log2(den)
    return torch.where(den.unsqueeze(-1) > 0, v, torch.zeros_like(v)), lse


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_cascade_merges(dtype):
    torch.manual_seed(3)
    seq, heads, d = 50, 8, 128
    va, vb = (torch.randn(seq, heads, d, dtype=dtype, device=DEV) for _ in range(2))
    sa, sb = (torch.randn(seq, heads, device=DEV) * 8 for _ in range(2))
    sa[3] = float("-inf")  # one empty state
    sa[4], sb[4] = float("-inf"), float("-inf")  # no keys at all
    v, s = flashjit.merge_state(va, sa, vb, sb)
    rv, rs = merge_ref(torch.stack([va, vb], 1), torch.stack([sa, sb], 1))
    close(v, rv, 1e-2 if dtype == torch.bfloat16 else 2e-3)
    torch.testing.assert_close(s.double(), rs, rtol=1e-5, atol=1e-5)
    assert torch.all(v[4] == 0) and torch.all(torch.isneginf(s[4]))
    # in place, with a mask: masked-out rows keep their values
    v2, s2 = va.clone(), sa.clone()
    mask = torch.arange(seq, device=DEV) % 3 != 0
    flashjit.merge_state_in_place(v2, s2, vb, sb, mask=mask)
    assert torch.equal(v2[~mask], va[~mask]) and torch.equal(s2[~mask], sa[~mask])
    close(v2[mask], rv[mask], 1e-2 if dtype == torch.bfloat16 else 2e-3)
    # many states, stacked
    vs = torch.randn(seq, 5, heads, d, dtype=dtype, device=DEV)
    ss = torch.randn(seq, 5, heads, device=DEV) * 4
    v3, s3 = flashjit.merge_states(vs, ss)
    rv3, rs3 = merge_ref(vs, ss)
    close(v3, rv3, 1e-2 if dtype == torch.bfloat16 else 2e-3)
    torch.testing.assert_close(s3.double(), rs3, rtol=1e-5, atol=1e-5)


def test_errors_with_real_tensors():
    w = torch.randn(4096, dtype=torch.bfloat16, device=DEV)
    with pytest.raises(flashjit.InvalidArgumentError, match="CUDA"):
        flashjit.rmsnorm(torch.randn(4, 4096, dtype=torch.bfloat16), w.cpu())
    with pytest.raises(flashjit.InvalidArgumentError, match="input"):
        flashjit.rmsnorm(torch.randn(4, 4096, device=DEV, dtype=torch.float64), w)
    with pytest.raises(flashjit.InvalidArgumentError):
        flashjit.rmsnorm(torch.randn(4, 4096, dtype=torch.bfloat16, device=DEV).t(), w)


def test_streams_and_dlpack_objects():
    x = torch.randn(32, 4096, dtype=torch.bfloat16, device=DEV)
    w = torch.randn(4096, dtype=torch.bfloat16, device=DEV)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        out = flashjit.rmsnorm(x, w)
    s.synchronize()
    close(out, rms_ref(x, w, 1e-6))

    class OnlyDlpack:  # not a torch.Tensor: goes through the DLPack capsule path
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__()

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    out2 = torch.empty_like(x)
    flashjit.rmsnorm(OnlyDlpack(x), OnlyDlpack(w), out=OnlyDlpack(out2))
    torch.cuda.synchronize()
    close(out2, rms_ref(x, w, 1e-6))


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_stream_from_another_device():
    x = torch.randn(4, 4096, dtype=torch.bfloat16, device="cuda:0")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda:0")
    other = torch.cuda.Stream(device="cuda:1")
    rc = flashjit._clib.flashjit_rmsnorm(
        flashjit.engine.handle(), flashjit._tensor.dl(x, 0), flashjit._tensor.dl(w, 1),
        flashjit._tensor.dl(x, 2), 1e-6, other.cuda_stream)
    assert rc == flashjit.errors.INVALID_ARGUMENT
    assert b"belongs to" in flashjit._clib.flashjit_last_error()
