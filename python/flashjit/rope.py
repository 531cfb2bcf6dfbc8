"""Rotary embedding (FlashInfer's flashinfer.rope). q [nnz, Hq, D], k [nnz, Hk, D], f16/bf16.
Out-of-place forms return (q_rope, k_rope); _inplace forms return None."""

import ctypes

from . import _call, _lib
from ._tensor import require_torch

_call_op = _call.call
_OPT = _call.header("", "Q")  # i0: the address of a flashjit_rope_options
_COS_SIN = _call.header("", "qqq")  # head_size, is_neox, max_position_hint

# argument tuple -> (address, RopeOptions): options are few, built once each and never freed
# (another thread may be inside a call that reads one).
_OPTIONS = {}


def _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor=1.0,
             high_freq_factor=4.0, old_context_len=8192):
    key = (rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor, high_freq_factor,
           old_context_len)
    ref = _OPTIONS.get(key)
    if ref is None:
        ref = _make_options(*key)
        if len(_OPTIONS) < 4096:  # beyond that: built per call, kept alive by the caller
            _OPTIONS[key] = ref
    return ref


def _make_options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                  high_freq_factor, old_context_len):
    o = _lib.RopeOptions()
    o.rotary_dim = -1 if rotary_dim is None else int(rotary_dim)
    o.interleave = int(bool(interleave))
    o.rope_scale = float(rope_scale)
    o.rope_theta = float(rope_theta)
    o.low_freq_factor = float(low_freq_factor)
    o.high_freq_factor = float(high_freq_factor)
    o.old_context_len = int(old_context_len)
    return ctypes.addressof(o), o


def _outs(q, k, name):
    torch = require_torch(name)
    return torch.empty_like(q), torch.empty_like(k)


def apply_rope(q, k, indptr, offsets, rotary_dim=None, interleave=False, rope_scale=1,
               rope_theta=1e4):
    q_rope, k_rope = _outs(q, k, "apply_rope")
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta)
    _call_op(_call.APPLY_ROPE, _OPT, None, (q, k, q_rope, k_rope, indptr, offsets), opt[0])
    return q_rope, k_rope


def apply_rope_inplace(q, k, indptr, offsets, rotary_dim=None, interleave=False, rope_scale=1,
                       rope_theta=1e4):
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta)
    _call_op(_call.APPLY_ROPE_INPLACE, _OPT, None, (q, k, indptr, offsets), opt[0])


def apply_rope_pos_ids(q, k, pos_ids, rotary_dim=None, interleave=False, rope_scale=1,
                       rope_theta=1e4):
    q_rope, k_rope = _outs(q, k, "apply_rope_pos_ids")
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta)
    _call_op(_call.APPLY_ROPE_POS_IDS, _OPT, None, (q, k, q_rope, k_rope, pos_ids), opt[0])
    return q_rope, k_rope


def apply_rope_pos_ids_inplace(q, k, pos_ids, rotary_dim=None, interleave=False, rope_scale=1,
                               rope_theta=1e4):
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta)
    _call_op(_call.APPLY_ROPE_POS_IDS_INPLACE, _OPT, None, (q, k, pos_ids), opt[0])


def apply_llama31_rope(q, k, indptr, offsets, rotary_dim=None, interleave=False, rope_scale=8,
                       rope_theta=5e5, low_freq_factor=1, high_freq_factor=4,
                       old_context_len=8192):
    q_rope, k_rope = _outs(q, k, "apply_llama31_rope")
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                   high_freq_factor, old_context_len)
    _call_op(_call.APPLY_LLAMA31_ROPE, _OPT, None, (q, k, q_rope, k_rope, indptr, offsets), opt[0])
    return q_rope, k_rope


def apply_llama31_rope_inplace(q, k, indptr, offsets, rotary_dim=None, interleave=False,
                               rope_scale=8, rope_theta=5e5, low_freq_factor=1,
                               high_freq_factor=4, old_context_len=8192):
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                   high_freq_factor, old_context_len)
    _call_op(_call.APPLY_LLAMA31_ROPE_INPLACE, _OPT, None, (q, k, indptr, offsets), opt[0])


def apply_llama31_rope_pos_ids(q, k, pos_ids, rotary_dim=None, interleave=False, rope_scale=8,
                               rope_theta=5e5, low_freq_factor=1, high_freq_factor=4,
                               old_context_len=8192):
    q_rope, k_rope = _outs(q, k, "apply_llama31_rope_pos_ids")
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                   high_freq_factor, old_context_len)
    _call_op(_call.APPLY_LLAMA31_ROPE_POS_IDS, _OPT, None, (q, k, q_rope, k_rope, pos_ids), opt[0])
    return q_rope, k_rope


def apply_llama31_rope_pos_ids_inplace(q, k, pos_ids, rotary_dim=None, interleave=False,
                                       rope_scale=8, rope_theta=5e5, low_freq_factor=1,
                                       high_freq_factor=4, old_context_len=8192):
    opt = _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                   high_freq_factor, old_context_len)
    _call_op(_call.APPLY_LLAMA31_ROPE_POS_IDS_INPLACE, _OPT, None, (q, k, pos_ids), opt[0])


def apply_rope_with_cos_sin_cache(positions, query, key, head_size, cos_sin_cache, is_neox=True,
                                  max_position_hint=None):
    """vLLM/SGLang form: query [nnz, Hq * head_size], key [nnz, Hk * head_size]; cos_sin_cache
    f32 [max_position, rotary_dim] (cos half, then sin half). Returns (query_out, key_out).
    max_position_hint (flashjit extension): the largest position, checked against the cache."""
    query_out, key_out = _outs(query, key, "apply_rope_with_cos_sin_cache")
    _call_op(_call.APPLY_ROPE_WITH_COS_SIN_CACHE, _COS_SIN, None,
             (positions, query, key, query_out, key_out, cos_sin_cache), int(head_size),
             int(bool(is_neox)), -1 if max_position_hint is None else int(max_position_hint))
    return query_out, key_out


def apply_rope_with_cos_sin_cache_inplace(positions, query, key, head_size, cos_sin_cache,
                                          is_neox=True, max_position_hint=None):
    _call_op(_call.APPLY_ROPE_WITH_COS_SIN_CACHE_INPLACE, _COS_SIN, None,
             (positions, query, key, cos_sin_cache), int(head_size), int(bool(is_neox)),
             -1 if max_position_hint is None else int(max_position_hint))
