"""Normalization (FlashInfer's flashinfer.norm): rmsnorm, fused_add_rmsnorm, gemma_rmsnorm,
gemma_fused_add_rmsnorm, layernorm. f16/bf16 activations, fp32 accumulation."""

from . import _call
from ._tensor import require_torch

_call_op = _call.call
_EPS = _call.header("d")


def rmsnorm(input, weight, eps=1e-6, out=None, enable_pdl=None):
    """out = input / RMS(input) * weight. input [tokens, hidden] or [tokens, heads, hidden];
    weight [hidden]. Returns `out` (allocated like input when None). enable_pdl is ignored."""
    if out is None:
        out = require_torch("rmsnorm").empty_like(input)
    _call_op(_call.RMSNORM, _EPS, None, (input, weight, out), eps)
    return out


def gemma_rmsnorm(input, weight, eps=1e-6, out=None, enable_pdl=None):
    """out = input / RMS(input) * (weight + 1)."""
    if out is None:
        out = require_torch("gemma_rmsnorm").empty_like(input)
    _call_op(_call.GEMMA_RMSNORM, _EPS, None, (input, weight, out), eps)
    return out


def fused_add_rmsnorm(input, residual, weight, eps=1e-6, enable_pdl=None):
    """In place: residual += input; input = rmsnorm(residual) * weight. Returns None."""
    _call_op(_call.FUSED_ADD_RMSNORM, _EPS, None, (input, residual, weight), eps)


def gemma_fused_add_rmsnorm(input, residual, weight, eps=1e-6, enable_pdl=None):
    """In place: residual += input; input = rmsnorm(residual) * (weight + 1). Returns None."""
    _call_op(_call.GEMMA_FUSED_ADD_RMSNORM, _EPS, None, (input, residual, weight), eps)


def layernorm(input, gemma, beta, eps=1e-6, out=None):
    """out = (input - mean) / sqrt(var + eps) * gemma + beta (FlashInfer names the scale
    `gemma`). gemma and beta: f32 or input's dtype. `out` is a flashjit extension."""
    if out is None:
        out = require_torch("layernorm").empty_like(input)
    _call_op(_call.LAYERNORM, _EPS, None, (input, gemma, beta, out), eps)
    return out
