"""Normalization (FlashInfer's flashinfer.norm): rmsnorm, fused_add_rmsnorm, gemma_rmsnorm,
gemma_fused_add_rmsnorm, layernorm. f16/bf16 activations, fp32 accumulation."""

from . import _lib
from ._tensor import dl, require_torch, stream_of
from .engine import handle

_c = _lib.lib
_raise = _lib.raise_error


def rmsnorm(input, weight, eps=1e-6, out=None, enable_pdl=None):
    """out = input / RMS(input) * weight. input [tokens, hidden] or [tokens, heads, hidden];
    weight [hidden]. Returns `out` (allocated like input when None). enable_pdl is ignored."""
    if out is None:
        out = require_torch("rmsnorm").empty_like(input)
    rc = _c.flashjit_rmsnorm(handle(), dl(input, 0), dl(weight, 1), dl(out, 2), eps,
                             stream_of(input))
    if rc:
        _raise(rc)
    return out


def gemma_rmsnorm(input, weight, eps=1e-6, out=None, enable_pdl=None):
    """out = input / RMS(input) * (weight + 1)."""
    if out is None:
        out = require_torch("gemma_rmsnorm").empty_like(input)
    rc = _c.flashjit_gemma_rmsnorm(handle(), dl(input, 0), dl(weight, 1), dl(out, 2), eps,
                                   stream_of(input))
    if rc:
        _raise(rc)
    return out


def fused_add_rmsnorm(input, residual, weight, eps=1e-6, enable_pdl=None):
    """In place: residual += input; input = rmsnorm(residual) * weight. Returns None."""
    rc = _c.flashjit_fused_add_rmsnorm(handle(), dl(input, 0), dl(residual, 1), dl(weight, 2),
                                       eps, stream_of(input))
    if rc:
        _raise(rc)


def gemma_fused_add_rmsnorm(input, residual, weight, eps=1e-6, enable_pdl=None):
    """In place: residual += input; input = rmsnorm(residual) * (weight + 1). Returns None."""
    rc = _c.flashjit_gemma_fused_add_rmsnorm(handle(), dl(input, 0), dl(residual, 1),
                                             dl(weight, 2), eps, stream_of(input))
    if rc:
        _raise(rc)


def layernorm(input, gemma, beta, eps=1e-6, out=None):
    """out = (input - mean) / sqrt(var + eps) * gemma + beta (FlashInfer names the scale
    `gemma`). gemma and beta: f32 or input's dtype. `out` is a flashjit extension."""
    if out is None:
        out = require_torch("layernorm").empty_like(input)
    rc = _c.flashjit_layernorm(handle(), dl(input, 0), dl(gemma, 1), dl(beta, 2), dl(out, 3),
                               eps, stream_of(input))
    if rc:
        _raise(rc)
    return out
