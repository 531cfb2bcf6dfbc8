"""Paged KV cache (FlashInfer's flashinfer.page): append_paged_kv_cache,
get_batch_indices_positions, get_seq_lens."""

from . import _call
from ._tensor import require_torch

_call_op = _call.call
_APPEND = _call.header("dd", "q")  # k_scale, v_scale; layout
_NONE = _call.header()

_LAYOUTS = {"NHD": 0, "HND": 1}


def layout_code(kv_layout):
    try:
        return _LAYOUTS[kv_layout]
    except KeyError:
        raise ValueError(f"kv_layout {kv_layout!r}: allowed 'NHD', 'HND'") from None


def append_paged_kv_cache(append_key, append_value, batch_indices, positions, paged_kv_cache,
                          kv_indices, kv_indptr, kv_last_page_len, kv_layout="NHD",
                          k_scale=1.0, v_scale=1.0):
    """Writes append_key/append_value [nnz, Hkv, D] at (batch_indices[i], positions[i]).
    paged_kv_cache: a (k_cache, v_cache) tuple of [pages, page_size, Hkv, D] (NHD) or
    [pages, Hkv, page_size, D] (HND), or one [pages, 2, ...] tensor. Index tensors int32.
    k_scale/v_scale (flashjit extension): an fp8 cache stores value / scale."""
    layout = layout_code(kv_layout)
    if isinstance(paged_kv_cache, (tuple, list)):
        k_cache, v_cache = paged_kv_cache
        _call_op(_call.APPEND_PAGED_KV_CACHE, _APPEND, None,
                 (append_key, append_value, batch_indices, positions, k_cache, v_cache,
                  kv_indices, kv_indptr, kv_last_page_len), k_scale, v_scale, layout)
    else:
        _call_op(_call.APPEND_PAGED_KV_CACHE_COMBINED, _APPEND, None,
                 (append_key, append_value, batch_indices, positions, paged_kv_cache,
                  kv_indices, kv_indptr, kv_last_page_len), k_scale, v_scale, layout)


def get_batch_indices_positions(append_indptr, seq_lens, nnz, batch_indices=None,
                                positions=None):
    """For request b and its appended tokens j: batch_indices[j] = b, positions[j] = seq_lens[b]
    - append_len(b) + (j - append_indptr[b]). Returns (batch_indices, positions), int32 [nnz].
    batch_indices/positions (flashjit extension): outputs to fill instead of allocating."""
    if batch_indices is None or positions is None:
        torch = require_torch("get_batch_indices_positions")
        batch_indices = torch.empty(nnz, dtype=torch.int32, device=append_indptr.device)
        positions = torch.empty(nnz, dtype=torch.int32, device=append_indptr.device)
    _call_op(_call.GET_BATCH_INDICES_POSITIONS, _NONE, None,
             (append_indptr, seq_lens, batch_indices, positions))
    return batch_indices, positions


def get_seq_lens(kv_indptr, kv_last_page_len, page_size):
    """Sequence length of each request: (pages - 1) * page_size + last_page_len (0 without
    pages). Plain PyTorch, as in FlashInfer."""
    torch = require_torch("get_seq_lens")
    pages = kv_indptr[1:] - kv_indptr[:-1]
    return torch.where(pages > 0, (pages - 1).clamp(min=0) * page_size + kv_last_page_len,
                       torch.zeros_like(kv_last_page_len))
