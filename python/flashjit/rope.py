"""Rotary embedding (FlashInfer's flashinfer.rope). q [nnz, Hq, D], k [nnz, Hk, D], f16/bf16.
Out-of-place forms return (q_rope, k_rope); _inplace forms return None."""

import ctypes

from . import _lib
from ._tensor import dl, require_torch, stream_of
from .engine import handle

_c = _lib.lib
_raise = _lib.raise_error


_OPTIONS = {}  # argument tuple -> byref(RopeOptions): options are few, built once each


def _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor=1.0,
             high_freq_factor=4.0, old_context_len=8192):
    key = (rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor, high_freq_factor,
           old_context_len)
    ref = _OPTIONS.get(key)
    if ref is None:
        if len(_OPTIONS) > 1024:
            _OPTIONS.clear()
        ref = _OPTIONS[key] = _make_options(*key)
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
    return ctypes.byref(o)


def _outs(q, k, name):
    torch = require_torch(name)
    return torch.empty_like(q), torch.empty_like(k)


def apply_rope(q, k, indptr, offsets, rotary_dim=None, interleave=False, rope_scale=1,
               rope_theta=1e4):
    q_rope, k_rope = _outs(q, k, "apply_rope")
    rc = _c.flashjit_apply_rope(handle(), dl(q, 0), dl(k, 1), dl(q_rope, 2), dl(k_rope, 3),
                                dl(indptr, 4), dl(offsets, 5),
                                _options(rotary_dim, interleave, rope_scale, rope_theta),
                                stream_of(q))
    if rc:
        _raise(rc)
    return q_rope, k_rope


def apply_rope_inplace(q, k, indptr, offsets, rotary_dim=None, interleave=False, rope_scale=1,
                       rope_theta=1e4):
    rc = _c.flashjit_apply_rope_inplace(handle(), dl(q, 0), dl(k, 1), dl(indptr, 2),
                                        dl(offsets, 3),
                                        _options(rotary_dim, interleave, rope_scale, rope_theta),
                                        stream_of(q))
    if rc:
        _raise(rc)


def apply_rope_pos_ids(q, k, pos_ids, rotary_dim=None, interleave=False, rope_scale=1,
                       rope_theta=1e4):
    q_rope, k_rope = _outs(q, k, "apply_rope_pos_ids")
    rc = _c.flashjit_apply_rope_pos_ids(handle(), dl(q, 0), dl(k, 1), dl(q_rope, 2),
                                        dl(k_rope, 3), dl(pos_ids, 4),
                                        _options(rotary_dim, interleave, rope_scale, rope_theta),
                                        stream_of(q))
    if rc:
        _raise(rc)
    return q_rope, k_rope


def apply_rope_pos_ids_inplace(q, k, pos_ids, rotary_dim=None, interleave=False, rope_scale=1,
                               rope_theta=1e4):
    rc = _c.flashjit_apply_rope_pos_ids_inplace(
        handle(), dl(q, 0), dl(k, 1), dl(pos_ids, 2),
        _options(rotary_dim, interleave, rope_scale, rope_theta), stream_of(q))
    if rc:
        _raise(rc)


def apply_llama31_rope(q, k, indptr, offsets, rotary_dim=None, interleave=False, rope_scale=8,
                       rope_theta=5e5, low_freq_factor=1, high_freq_factor=4,
                       old_context_len=8192):
    q_rope, k_rope = _outs(q, k, "apply_llama31_rope")
    rc = _c.flashjit_apply_llama31_rope(
        handle(), dl(q, 0), dl(k, 1), dl(q_rope, 2), dl(k_rope, 3), dl(indptr, 4),
        dl(offsets, 5),
        _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                 high_freq_factor, old_context_len), stream_of(q))
    if rc:
        _raise(rc)
    return q_rope, k_rope


def apply_llama31_rope_inplace(q, k, indptr, offsets, rotary_dim=None, interleave=False,
                               rope_scale=8, rope_theta=5e5, low_freq_factor=1,
                               high_freq_factor=4, old_context_len=8192):
    rc = _c.flashjit_apply_llama31_rope_inplace(
        handle(), dl(q, 0), dl(k, 1), dl(indptr, 2), dl(offsets, 3),
        _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                 high_freq_factor, old_context_len), stream_of(q))
    if rc:
        _raise(rc)


def apply_llama31_rope_pos_ids(q, k, pos_ids, rotary_dim=None, interleave=False, rope_scale=8,
                               rope_theta=5e5, low_freq_factor=1, high_freq_factor=4,
                               old_context_len=8192):
    q_rope, k_rope = _outs(q, k, "apply_llama31_rope_pos_ids")
    rc = _c.flashjit_apply_llama31_rope_pos_ids(
        handle(), dl(q, 0), dl(k, 1), dl(q_rope, 2), dl(k_rope, 3), dl(pos_ids, 4),
        _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                 high_freq_factor, old_context_len), stream_of(q))
    if rc:
        _raise(rc)
    return q_rope, k_rope


def apply_llama31_rope_pos_ids_inplace(q, k, pos_ids, rotary_dim=None, interleave=False,
                                       rope_scale=8, rope_theta=5e5, low_freq_factor=1,
                                       high_freq_factor=4, old_context_len=8192):
    rc = _c.flashjit_apply_llama31_rope_pos_ids_inplace(
        handle(), dl(q, 0), dl(k, 1), dl(pos_ids, 2),
        _options(rotary_dim, interleave, rope_scale, rope_theta, low_freq_factor,
                 high_freq_factor, old_context_len), stream_of(q))
    if rc:
        _raise(rc)


def apply_rope_with_cos_sin_cache(positions, query, key, head_size, cos_sin_cache, is_neox=True,
                                  max_position_hint=None):
    """vLLM/SGLang form: query [nnz, Hq * head_size], key [nnz, Hk * head_size]; cos_sin_cache
    f32 [max_position, rotary_dim] (cos half, then sin half). Returns (query_out, key_out).
    max_position_hint (flashjit extension): the largest position, checked against the cache."""
    query_out, key_out = _outs(query, key, "apply_rope_with_cos_sin_cache")
    rc = _c.flashjit_apply_rope_with_cos_sin_cache(
        handle(), dl(positions, 0), dl(query, 1), dl(key, 2), dl(query_out, 3), dl(key_out, 4),
        int(head_size), dl(cos_sin_cache, 5), int(bool(is_neox)),
        -1 if max_position_hint is None else int(max_position_hint), stream_of(query))
    if rc:
        _raise(rc)
    return query_out, key_out


def apply_rope_with_cos_sin_cache_inplace(positions, query, key, head_size, cos_sin_cache,
                                          is_neox=True, max_position_hint=None):
    rc = _c.flashjit_apply_rope_with_cos_sin_cache_inplace(
        handle(), dl(positions, 0), dl(query, 1), dl(key, 2), int(head_size),
        dl(cos_sin_cache, 3), int(bool(is_neox)),
        -1 if max_position_hint is None else int(max_position_hint), stream_of(query))
    if rc:
        _raise(rc)
