"""Paged KV cache (FlashInfer's flashinfer.page): append_paged_kv_cache,
get_batch_indices_positions, get_seq_lens."""

from . import _lib
from ._tensor import dl, require_torch, stream_of
from .engine import handle

_c = _lib.lib
_raise = _lib.raise_error

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
    stream = stream_of(append_key)
    if isinstance(paged_kv_cache, (tuple, list)):
        k_cache, v_cache = paged_kv_cache
        rc = _c.flashjit_append_paged_kv_cache(
            handle(), dl(append_key, 0), dl(append_value, 1), dl(batch_indices, 2),
            dl(positions, 3), dl(k_cache, 4), dl(v_cache, 5), dl(kv_indices, 6),
            dl(kv_indptr, 7), dl(kv_last_page_len, 8), layout, k_scale, v_scale, stream)
    else:
        rc = _c.flashjit_append_paged_kv_cache_combined(
            handle(), dl(append_key, 0), dl(append_value, 1), dl(batch_indices, 2),
            dl(positions, 3), dl(paged_kv_cache, 4), dl(kv_indices, 5), dl(kv_indptr, 6),
            dl(kv_last_page_len, 7), layout, k_scale, v_scale, stream)
    if rc:
        _raise(rc)


def get_batch_indices_positions(append_indptr, seq_lens, nnz, batch_indices=None,
                                positions=None):
    """For request b and its appended tokens j: batch_indices[j] = b, positions[j] = seq_lens[b]
    - append_len(b) + (j - append_indptr[b]). Returns (batch_indices, positions), int32 [nnz].
    batch_indices/positions (flashjit extension): outputs to fill instead of allocating."""
    if batch_indices is None or positions is None:
        torch = require_torch("get_batch_indices_positions")
        batch_indices = torch.empty(nnz, dtype=torch.int32, device=append_indptr.device)
        positions = torch.empty(nnz, dtype=torch.int32, device=append_indptr.device)
    rc = _c.flashjit_get_batch_indices_positions(handle(), dl(append_indptr, 0), dl(seq_lens, 1),
                                                 dl(batch_indices, 2), dl(positions, 3),
                                                 stream_of(append_indptr))
    if rc:
        _raise(rc)
    return batch_indices, positions


def get_seq_lens(kv_indptr, kv_last_page_len, page_size):
    """Sequence length of each request: (pages - 1) * page_size + last_page_len (0 without
    pages). Plain PyTorch, as in FlashInfer."""
    torch = require_torch("get_seq_lens")
    pages = kv_indptr[1:] - kv_indptr[:-1]
    return torch.where(pages > 0, (pages - 1).clamp(min=0) * page_size + kv_last_page_len,
                       torch.zeros_like(kv_last_page_len))
