"""Gated activations (FlashInfer's flashinfer.activation): out = act(x[..., :d]) * x[..., d:]."""

from . import _call
from ._tensor import require_torch

_call_op = _call.call
_NONE = _call.header()


def _out_for(input, out, name):
    if out is not None:
        return out
    torch = require_torch(name)
    shape = list(input.shape)
    if not shape or shape[-1] % 2:
        raise ValueError(f"{name}: the last dimension of input must be even, got {shape}")
    shape[-1] //= 2
    return torch.empty(shape, dtype=input.dtype, device=input.device)


def silu_and_mul(input, out=None, enable_pdl=None):
    """silu(x[..., :d]) * x[..., d:]; input [tokens, 2d] -> out [tokens, d]."""
    out = _out_for(input, out, "silu_and_mul")
    _call_op(_call.SILU_AND_MUL, _NONE, None, (input, out))
    return out


def gelu_and_mul(input, out=None, enable_pdl=None):
    """gelu(x[..., :d]) * x[..., d:] (erf form)."""
    out = _out_for(input, out, "gelu_and_mul")
    _call_op(_call.GELU_AND_MUL, _NONE, None, (input, out))
    return out


def gelu_tanh_and_mul(input, out=None, enable_pdl=None):
    """gelu_tanh(x[..., :d]) * x[..., d:]."""
    out = _out_for(input, out, "gelu_tanh_and_mul")
    _call_op(_call.GELU_TANH_AND_MUL, _NONE, None, (input, out))
    return out
