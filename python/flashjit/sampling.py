"""Sampling (FlashInfer's flashinfer.sampling), sorting-free. probs f32 [batch, vocab]; logits
f32/f16/bf16; samples int32 [batch]. top_k / top_p / min_p: a scalar or a per-row tensor.

Randomness: Philox keyed by (seed, offset). `seed`/`offset` given as ints are used as is; as
tensors (uint64/int64 on the device) they are read by the kernel (CUDA-graph friendly). With a
`generator`, seed = generator.initial_seed() and the offset is the generator's Philox offset,
advanced per call. With neither, seed = torch.initial_seed() (read once) and a per-process
counter gives the offset.
"""

import ctypes
import itertools
import threading

from . import _lib
from ._tensor import dl, require_torch, stream_of, torch_module
from .engine import handle

_c = _lib.lib
_raise = _lib.raise_error

_ORDERS = {"top_k_first": 0, "joint": 1}


class _Args(threading.local):
    def __init__(self):
        self.args = _lib.SamplingArgs()
        self.addr = ctypes.addressof(self.args)


_tls = _Args()
_offsets = itertools.count(1)
_default_seed = None


def _is_tensor(x):
    torch = torch_module()
    return torch is not None and isinstance(x, torch.Tensor)


def _rng(args, generator, seed, offset, rows):
    args.seed_device = None
    args.offset_device = None
    if _is_tensor(seed):
        args.seed_device = seed.data_ptr()
        args.seed = 0
    elif seed is not None:
        args.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    if _is_tensor(offset):
        args.offset_device = offset.data_ptr()
        args.offset = 0
    elif offset is not None:
        args.offset = int(offset) & 0xFFFFFFFFFFFFFFFF
    if seed is not None and offset is not None:
        return
    if generator is not None:
        s = generator.initial_seed()
        try:
            o = generator.get_offset()
            generator.set_offset(o + 4 * max(1, rows))
        except (AttributeError, RuntimeError):
            o = next(_offsets)
    else:
        global _default_seed
        if _default_seed is None:
            torch = torch_module()
            _default_seed = torch.initial_seed() if torch is not None else 0x5EED
        s, o = _default_seed, next(_offsets)
    if seed is None:
        args.seed = s & 0xFFFFFFFFFFFFFFFF
    if offset is None:
        args.offset = o & 0xFFFFFFFFFFFFFFFF


def _prepare(probs, indices, generator, seed, offset, out, check_nan, name):
    if check_nan:
        torch = require_torch(name + "(check_nan=True)")
        if torch.isnan(probs).any():
            raise ValueError(f"{name}: input contains NaN")
    rows = indices.shape[0] if indices is not None else probs.shape[0]
    if out is None:
        torch = require_torch(name)
        out = torch.empty(rows, dtype=torch.int32, device=probs.device)
    a = _tls.args
    a.indices = dl(indices, 3)
    a.valid = None
    _rng(a, generator, seed, offset, rows)
    return out, _tls.addr


def _param(x, dtype_name, slot):
    """(scalar, tensor address) for a scalar-or-tensor parameter."""
    if _is_tensor(x):
        torch = torch_module()
        dtype = getattr(torch, dtype_name)
        if x.dtype != dtype:
            x = x.to(dtype)
        return None, dl(x, slot), x
    return x, None, None


def sampling_from_probs(probs, indices=None, deterministic=True, generator=None,
                        check_nan=False, seed=None, offset=None, out=None):
    out, args = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                         "sampling_from_probs")
    rc = _c.flashjit_sampling_from_probs(handle(), dl(probs, 0), dl(out, 1), args,
                                         stream_of(probs))
    if rc:
        _raise(rc)
    return out


def sampling_from_logits(logits, indices=None, deterministic=True, generator=None,
                         check_nan=False, seed=None, offset=None, out=None):
    out, args = _prepare(logits, indices, generator, seed, offset, out, check_nan,
                         "sampling_from_logits")
    rc = _c.flashjit_sampling_from_logits(handle(), dl(logits, 0), dl(out, 1), args,
                                          stream_of(logits))
    if rc:
        _raise(rc)
    return out


def top_k_sampling_from_probs(probs, top_k, indices=None, deterministic=True, generator=None,
                              check_nan=False, seed=None, offset=None, out=None):
    out, args = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                         "top_k_sampling_from_probs")
    k, k_arr, _keep = _param(top_k, "int32", 2)
    rc = _c.flashjit_top_k_sampling_from_probs(handle(), dl(probs, 0), dl(out, 1),
                                               1 if k is None else int(k), k_arr, args,
                                               stream_of(probs))
    if rc:
        _raise(rc)
    return out


def top_p_sampling_from_probs(probs, top_p, indices=None, deterministic=True, generator=None,
                              check_nan=False, seed=None, offset=None, out=None):
    out, args = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                         "top_p_sampling_from_probs")
    p, p_arr, _keep = _param(top_p, "float32", 2)
    rc = _c.flashjit_top_p_sampling_from_probs(handle(), dl(probs, 0), dl(out, 1),
                                               1.0 if p is None else float(p), p_arr, args,
                                               stream_of(probs))
    if rc:
        _raise(rc)
    return out


def min_p_sampling_from_probs(probs, min_p, indices=None, deterministic=True, generator=None,
                              check_nan=False, seed=None, offset=None, out=None):
    out, args = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                         "min_p_sampling_from_probs")
    p, p_arr, _keep = _param(min_p, "float32", 2)
    rc = _c.flashjit_min_p_sampling_from_probs(handle(), dl(probs, 0), dl(out, 1),
                                               0.0 if p is None else float(p), p_arr, args,
                                               stream_of(probs))
    if rc:
        _raise(rc)
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
    out, args = _prepare(probs, indices, generator, seed, offset, out, check_nan,
                         "top_k_top_p_sampling_from_probs")
    k, k_arr, _keep_k = _param(top_k, "int32", 2)
    p, p_arr, _keep_p = _param(top_p, "float32", 4)
    rc = _c.flashjit_top_k_top_p_sampling_from_probs(
        handle(), dl(probs, 0), dl(out, 1), 1 if k is None else int(k), k_arr,
        1.0 if p is None else float(p), p_arr, order, args, stream_of(probs))
    if rc:
        _raise(rc)
    return out


def top_k_top_p_sampling_from_logits(logits, top_k, top_p, indices=None,
                                     filter_apply_order="top_k_first", deterministic=True,
                                     generator=None, check_nan=False, seed=None, offset=None,
                                     out=None):
    order = _order(filter_apply_order)
    out, args = _prepare(logits, indices, generator, seed, offset, out, check_nan,
                         "top_k_top_p_sampling_from_logits")
    k, k_arr, _keep_k = _param(top_k, "int32", 2)
    p, p_arr, _keep_p = _param(top_p, "float32", 4)
    rc = _c.flashjit_top_k_top_p_sampling_from_logits(
        handle(), dl(logits, 0), dl(out, 1), 1 if k is None else int(k), k_arr,
        1.0 if p is None else float(p), p_arr, order, args, stream_of(logits))
    if rc:
        _raise(rc)
    return out


def top_p_renorm_probs(probs, top_p, out=None):
    if out is None:
        out = require_torch("top_p_renorm_probs").empty_like(probs)
    p, p_arr, _keep = _param(top_p, "float32", 2)
    rc = _c.flashjit_top_p_renorm_probs(handle(), dl(probs, 0), dl(out, 1),
                                        1.0 if p is None else float(p), p_arr, stream_of(probs))
    if rc:
        _raise(rc)
    return out


def top_k_renorm_probs(probs, top_k, out=None):
    if out is None:
        out = require_torch("top_k_renorm_probs").empty_like(probs)
    k, k_arr, _keep = _param(top_k, "int32", 2)
    rc = _c.flashjit_top_k_renorm_probs(handle(), dl(probs, 0), dl(out, 1),
                                        1 if k is None else int(k), k_arr, stream_of(probs))
    if rc:
        _raise(rc)
    return out


def top_k_mask_logits(logits, top_k, out=None):
    if out is None:
        out = require_torch("top_k_mask_logits").empty_like(logits)
    k, k_arr, _keep = _param(top_k, "int32", 2)
    rc = _c.flashjit_top_k_mask_logits(handle(), dl(logits, 0), dl(out, 1),
                                       1 if k is None else int(k), k_arr, stream_of(logits))
    if rc:
        _raise(rc)
    return out


def softmax(logits, temperature=None, enable_pdl=None, out=None):
    """softmax(logits / temperature) in f32; temperature: None (1), a float or a [batch]
    tensor."""
    if out is None:
        torch = require_torch("softmax")
        out = torch.empty(logits.shape, dtype=torch.float32, device=logits.device)
    t, t_arr, _keep = _param(1.0 if temperature is None else temperature, "float32", 2)
    rc = _c.flashjit_softmax(handle(), dl(logits, 0), dl(out, 1), 1.0 if t is None else float(t),
                             t_arr, stream_of(logits))
    if rc:
        _raise(rc)
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
    a = _lib.SamplingArgs()
    _rng(a, generator, seed, offset, draft_token_ids.shape[0])
    rc = _c.flashjit_chain_speculative_sampling(
        handle(), dl(draft_probs, 0), dl(draft_token_ids, 1), dl(target_probs, 2), dl(out, 3),
        dl(maybe_output_accepted_token_num, 4), dl(maybe_output_emitted_draft_token_num, 5),
        a.seed, a.offset, stream_of(draft_probs))
    if rc:
        _raise(rc)
    return out
