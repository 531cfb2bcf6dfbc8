"""Sampling (FlashInfer's flashinfer.sampling), sorting-free. probs f32 [batch, vocab]; logits
f32/f16/bf16; samples int32 [batch]. top_k / top_p / min_p: a scalar or a per-row tensor.

Randomness: Philox keyed by (seed, offset). `seed`/`offset` given as ints are used as is; as
tensors (uint64/int64 on the device) they are read by the kernel (CUDA-graph friendly). With a
`generator`, seed = generator.initial_seed() and the offset is the generator's Philox offset,
advanced per call. With neither, seed = torch.initial_seed() (read once) and a per-process
counter gives the offset.
"""

import itertools

from . import _call
from ._tensor import require_torch, torch_module

_call_op = _call.call
# f0 top_p / min_p; i0 seed, i1 offset, i2 seed_device, i3 offset_device, i4 top_k, i5 order
_SAMPLE = _call.header("d", "QQQQqq")
_RENORM_K = _call.header("", "q")
_RENORM_P = _call.header("d")
_SEED = _call.header("", "QQ")
_MASK = 0xFFFFFFFFFFFFFFFF

_ORDERS = {"top_k_first": 0, "joint": 1}

_offsets = itertools.count(1)
_default_seed = None


def _is_tensor(x):
    torch = torch_module()
    return torch is not None and isinstance(x, torch.Tensor)


def _rng(generator, seed, offset, rows):
    """(seed, offset, seed_device, offset_device) for the packed call."""
    if seed is not None and offset is not None and seed.__class__ is int and \
            offset.__class__ is int:
        return seed & _MASK, offset & _MASK, 0, 0  # the common explicit form, cheaply
    s = o = 0
    s_dev = o_dev = 0
    if _is_tensor(seed):
        s_dev = seed.data_ptr()
    elif seed is not None:
        s = int(seed) & _MASK
    if _is_tensor(offset):
        o_dev = offset.data_ptr()
    elif offset is not None:
        o = int(offset) & _MASK
    if seed is not None and offset is not None:
        return s, o, s_dev, o_dev
    if generator is not None:
        gs = generator.initial_seed()
        try:
            go = generator.get_offset()
            generator.set_offset(go + 4 * max(1, rows))
        except (AttributeError, RuntimeError):
            go = next(_offsets)
    else:
        global _default_seed
        if _default_seed is None:
            torch = torch_module()
            _default_seed = torch.initial_seed() if torch is not None else 0x5EED
        gs, go = _default_seed, next(_offsets)
    if seed is None:
        s = gs & _MASK
    if offset is None:
        o = go & _MASK
    return s, o, s_dev, o_dev


def _prepare(probs, indices, generator, seed, offset, out, check_nan, name):
    """(out, rng scalars)."""
    if check_nan:
        torch = require_torch(name + "(check_nan=True)")
        if torch.isnan(probs).any():
            raise ValueError(f"{name}: input contains NaN")
    rows = indices.shape[0] if indices is not None else probs.shape[0]
    if out is None:
        torch = require_torch(name)
        out = torch.empty(rows, dtype=torch.int32, device=probs.device)
    return out, _rng(generator, seed, offset, rows)


def _param(x, dtype_name):
    """(scalar, tensor) for a scalar-or-tensor parameter (the tensor converted to dtype)."""
    if x.__class__ is int or x.__class__ is float:
        return x, None
    if _is_tensor(x):
        dtype = getattr(torch_module(), dtype_name)
        if x.dtype != dtype:
            x = x.to(dtype)
        return None, x
    return x, None


def sampling_from_probs(probs, indices=None, deterministic=True, generator=None,
                        check_nan=False, seed=None, offset=None, out=None):
    out, r = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                      "sampling_from_probs")
    _call_op(_call.SAMPLING_FROM_PROBS, _SAMPLE, None, (probs, out, indices, None), 0.0, *r,
             0, 0)
    return out


def sampling_from_logits(logits, indices=None, deterministic=True, generator=None,
                         check_nan=False, seed=None, offset=None, out=None):
    out, r = _prepare(logits, indices, generator, seed, offset, out, check_nan,
                      "sampling_from_logits")
    _call_op(_call.SAMPLING_FROM_LOGITS, _SAMPLE, None, (logits, out, indices, None), 0.0, *r,
             0, 0)
    return out


def top_k_sampling_from_probs(probs, top_k, indices=None, deterministic=True, generator=None,
                              check_nan=False, seed=None, offset=None, out=None):
    out, r = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                      "top_k_sampling_from_probs")
    k, k_arr = _param(top_k, "int32")
    _call_op(_call.TOP_K_SAMPLING_FROM_PROBS, _SAMPLE, None, (probs, out, indices, None, k_arr),
             0.0, *r, 1 if k is None else int(k), 0)
    return out


def top_p_sampling_from_probs(probs, top_p, indices=None, deterministic=True, generator=None,
                              check_nan=False, seed=None, offset=None, out=None):
    out, r = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                      "top_p_sampling_from_probs")
    p, p_arr = _param(top_p, "float32")
    _call_op(_call.TOP_P_SAMPLING_FROM_PROBS, _SAMPLE, None, (probs, out, indices, None, p_arr),
             1.0 if p is None else float(p), *r, 0, 0)
    return out


def min_p_sampling_from_probs(probs, min_p, indices=None, deterministic=True, generator=None,
                              check_nan=False, seed=None, offset=None, out=None):
    out, r = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                      "min_p_sampling_from_probs")
    p, p_arr = _param(min_p, "float32")
    _call_op(_call.MIN_P_SAMPLING_FROM_PROBS, _SAMPLE, None, (probs, out, indices, None, p_arr),
             0.0 if p is None else float(p), *r, 0, 0)
    return out


def _order(filter_apply_order):
    try:
        return _ORDERS[filter_apply_order]
    except KeyError:
        raise ValueError(f"filter_apply_order {filter_apply_order!r}: allowed 'top_k_first', "
                         "'joint'") from None


def top_k_top_p_sampling_from_probs(probs, top_k, top_p, indices=None,
                                    filter_apply_order="top_k_first", deterministic=True,
                                    generator=None, check_nan=False, seed=None, offset=None,
                                    out=None):
    order = _order(filter_apply_order)
    out, r = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                      "top_k_top_p_sampling_from_probs")
    k, k_arr = _param(top_k, "int32")
    p, p_arr = _param(top_p, "float32")
    _call_op(_call.TOP_K_TOP_P_SAMPLING_FROM_PROBS, _SAMPLE, None,
             (probs, out, indices, None, k_arr, p_arr), 1.0 if p is None else float(p), *r,
             1 if k is None else int(k), order)
    return out


def top_k_top_p_sampling_from_logits(logits, top_k, top_p, indices=None,
                                     filter_apply_order="top_k_first", deterministic=True,
                                     generator=None, check_nan=False, seed=None, offset=None,
                                     out=None):
    order = _order(filter_apply_order)
    out, r = _prepare(logits, indices, generator, seed, offset, out, check_nan,
                      "top_k_top_p_sampling_from_logits")
    k, k_arr = _param(top_k, "int32")
    p, p_arr = _param(top_p, "float32")
    _call_op(_call.TOP_K_TOP_P_SAMPLING_FROM_LOGITS, _SAMPLE, None,
             (logits, out, indices, None, k_arr, p_arr), 1.0 if p is None else float(p), *r,
             1 if k is None else int(k), order)
    return out


def top_p_renorm_probs(probs, top_p, out=None):
    if out is None:
        out = require_torch("top_p_renorm_probs").empty_like(probs)
    p, p_arr = _param(top_p, "float32")
    _call_op(_call.TOP_P_RENORM_PROBS, _RENORM_P, None, (probs, out, p_arr),
             1.0 if p is None else float(p))
    return out


def top_k_renorm_probs(probs, top_k, out=None):
    if out is None:
        out = require_torch("top_k_renorm_probs").empty_like(probs)
    k, k_arr = _param(top_k, "int32")
    _call_op(_call.TOP_K_RENORM_PROBS, _RENORM_K, None, (probs, out, k_arr),
             1 if k is None else int(k))
    return out


def top_k_mask_logits(logits, top_k, out=None):
    if out is None:
        out = require_torch("top_k_mask_logits").empty_like(logits)
    k, k_arr = _param(top_k, "int32")
    _call_op(_call.TOP_K_MASK_LOGITS, _RENORM_K, None, (logits, out, k_arr),
             1 if k is None else int(k))
    return out


def softmax(logits, temperature=None, enable_pdl=None, out=None):
    """softmax(logits / temperature) in f32; temperature: None (1), a float or a [batch]
    tensor."""
    if out is None:
        torch = require_torch("softmax")
        out = torch.empty(logits.shape, dtype=torch.float32, device=logits.device)
    t, t_arr = _param(1.0 if temperature is None else temperature, "float32")
    _call_op(_call.SOFTMAX, _RENORM_P, None, (logits, out, t_arr), 1.0 if t is None else float(t))
    return out


def chain_speculative_sampling(draft_probs, draft_token_ids, target_probs,
                               maybe_output_accepted_token_num=None,
                               maybe_output_emitted_draft_token_num=None, deterministic=True,
                               generator=None, seed=None, offset=None, out=None):
    """Returns output_token_ids int32 [batch, n + 1]: accepted drafts, the replacement/bonus
    token, then -1. The two optional counters (int32 [batch]) are accumulated in place."""
    if _is_tensor(seed) or _is_tensor(offset):
        raise TypeError("chain_speculative_sampling: seed and offset must be ints (device "
                        "tensors are not supported here)")
    if out is None:
        torch = require_torch("chain_speculative_sampling")
        b, n = draft_token_ids.shape[0], draft_token_ids.shape[1]
        out = torch.empty((b, n + 1), dtype=torch.int32, device=draft_probs.device)
    s, o, _, _ = _rng(generator, seed, offset, draft_token_ids.shape[0])
    _call_op(_call.CHAIN_SPECULATIVE_SAMPLING, _SEED, None,
             (draft_probs, draft_token_ids, target_probs, out, maybe_output_accepted_token_num,
              maybe_output_emitted_draft_token_num), s, o)
    return out
