"""Attention-state merges (FlashInfer's flashinfer.cascade merge_state, merge_state_in_place,
merge_states). A state is an output row v [..., head_dim] and s, the base-2 log-sum-exp of the
logits behind it (float32), as the decode ops return it with return_lse=True:

    s = log2(sum_i 2^s_i),   v = sum_i 2^(s_i - s) v_i   (fp32 math)

A state with s_i = -inf adds nothing; a row of only -inf states gets v = 0, s = -inf; a NaN or
+inf s_i makes the row NaN. v is float16, bfloat16 or float32.
"""

from . import _call
from ._tensor import require_torch

_call_op = _call.call
_NONE = _call.header()


def merge_state(v_a, s_a, v_b, s_b, v_out=None, s_out=None):
    """Merges (v_a, s_a) and (v_b, s_b), each v [seq, heads, head_dim] and s [seq, heads];
    returns (v, s) (new tensors unless v_out / s_out are given)."""
    if v_out is None or s_out is None:
        torch = require_torch("merge_state")
        if v_out is None:
            v_out = torch.empty_like(v_a)
        if s_out is None:
            s_out = torch.empty(tuple(s_a.shape), dtype=torch.float32, device=s_a.device)
    _call_op(_call.MERGE_STATE, _NONE, None, (v_a, s_a, v_b, s_b, v_out, s_out))
    return v_out, s_out


def merge_state_in_place(v, s, v_other, s_other, mask=None):
    """(v, s) <- merge((v, s), (v_other, s_other)) for every seq whose mask (bool [seq]) is
    True (all of them when mask is None)."""
    _call_op(_call.MERGE_STATE_IN_PLACE, _NONE, None, (v, s, v_other, s_other, mask))


def merge_states(v, s, v_out=None, s_out=None):
    """Merges num_states states per row: v [seq, num_states, heads, head_dim], s [seq,
    num_states, heads] -> (v [seq, heads, head_dim], s [seq, heads])."""
    if v_out is None or s_out is None:
        torch = require_torch("merge_states")
        if v_out is None:
            shape = (v.shape[0], v.shape[2], v.shape[3]) if len(v.shape) == 4 else tuple(v.shape)
            v_out = torch.empty(shape, dtype=v.dtype, device=v.device)
        if s_out is None:
            shape = (s.shape[0], s.shape[2]) if len(s.shape) == 3 else tuple(s.shape)
            s_out = torch.empty(shape, dtype=torch.float32, device=s.device)
    _call_op(_call.MERGE_STATES, _NONE, None, (v, s, v_out, s_out))
    return v_out, s_out
