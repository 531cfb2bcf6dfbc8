"""Loads libflashjit.so with ctypes and declares the C ABI (include/flashjit/flashjit.h).

Nothing here needs PyTorch. The library is found, in order, at $FLASHJIT_LIBRARY, next to this
package (flashjit/libflashjit.so or ../lib/libflashjit.so, an install tree), in a build tree of
the source checkout (<repo>/build*/libflashjit.so, newest first), then by the system loader.
"""

import ctypes
import glob
import os

from . import errors

_c_void_p = ctypes.c_void_p
_c_int = ctypes.c_int
_c_float = ctypes.c_float
_c_int64 = ctypes.c_int64
_c_int32 = ctypes.c_int32
_c_uint64 = ctypes.c_uint64
_c_size_t = ctypes.c_size_t
_c_char_p = ctypes.c_char_p
_P = ctypes.POINTER


def _candidates():
    env = os.environ.get("FLASHJIT_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libflashjit.so")
    # <prefix>/lib/python3.X/site-packages/flashjit -> <prefix>/lib
    yield os.path.normpath(os.path.join(here, "..", "..", "..", "libflashjit.so"))
    yield os.path.normpath(os.path.join(here, "..", "lib", "libflashjit.so"))
    # <prefix>/lib/python/flashjit (cmake --install) -> <prefix>/lib
    yield os.path.normpath(os.path.join(here, "..", "..", "libflashjit.so"))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    builds = glob.glob(os.path.join(repo, "build*", "libflashjit.so"))
    builds.sort(key=lambda p: os.path.getmtime(p), reverse=True)
    yield from builds
    yield "libflashjit.so.0"
    yield "libflashjit.so"


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError(
        "flashjit: cannot load libflashjit.so; set FLASHJIT_LIBRARY to its path. Tried: "
        + "; ".join(tried))


lib, library_path = _load()


class EngineOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("cache_dir", _c_char_p),
        ("disable_cache", _c_int),
        ("bundles", _c_char_p),
        ("arch", _c_char_p),
        ("cuda_include_dir", _c_char_p),
        ("disable_jit", _c_int),
        ("always_compile", _c_int),
        ("dump_dir", _c_char_p),
        ("dry_run", _c_int),
        ("compile_wait_ms", _c_int),
        ("trusted_bundle_keys", _c_char_p),
        ("require_signed_bundles", _c_int),
        ("read_environment", _c_int),
    ]


class EngineStats(ctypes.Structure):
    _fields_ = [(n, _c_int64) for n in (
        "compiles", "compile_failures", "memory_hits", "cache_hits", "bundle_hits",
        "module_loads", "compile_waits", "store_failures")]


class RopeOptions(ctypes.Structure):
    _fields_ = [
        ("rotary_dim", _c_int64),
        ("interleave", _c_int),
        ("rope_scale", _c_float),
        ("rope_theta", _c_float),
        ("low_freq_factor", _c_float),
        ("high_freq_factor", _c_float),
        ("old_context_len", _c_int64),
    ]


class SamplingArgs(ctypes.Structure):
    _fields_ = [
        ("indices", _c_void_p),
        ("valid", _c_void_p),
        ("seed", _c_uint64),
        ("offset", _c_uint64),
        ("seed_device", _c_void_p),
        ("offset_device", _c_void_p),
    ]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DecodeOptions(ctypes.Structure):
    _fields_ = [
        ("sm_scale", _c_float),
        ("logits_soft_cap", _c_float),
        ("window_left", _c_int32),
        ("alibi", _c_int),
        ("rope", _c_int),
        ("rope_scale", _c_float),
        ("rope_theta", _c_float),
        ("k_scale", _c_float),
        ("v_scale", _c_float),
        ("sinks", _c_void_p),
    ]


class BatchDecodeConfig(ctypes.Structure):
    _fields_ = [
        ("num_qo_heads", _c_int32),
        ("num_kv_heads", _c_int32),
        ("head_dim", _c_int32),
        ("page_size", _c_int32),
        ("q_dtype", DLDataType),
        ("kv_dtype", DLDataType),
        ("layout", _c_int),
        ("device", _c_int32),
        ("max_batch_size", _c_int32),
        ("cuda_graph", _c_int),
    ]


T = _c_void_p  # a DLTensor* (a packed buffer from flashjit._tensor)
S = _c_void_p  # a stream
E = _c_void_p  # a handle
_BUF = (_c_char_p, _c_size_t, _P(_c_size_t))

_SIGNATURES = {
    "flashjit_status_name": (_c_char_p, [_c_int]),
    "flashjit_last_error": (_c_char_p, []),
    "flashjit_version": (_c_char_p, []),
    "flashjit_abi_version": (_c_int, []),
    "flashjit_engine_options_init": (None, [_P(EngineOptions)]),
    "flashjit_engine_create": (_c_int, [_P(EngineOptions), _P(_c_void_p)]),
    "flashjit_engine_destroy": (_c_int, [E]),
    "flashjit_engine_show_config": (_c_int, [E, *_BUF]),
    "flashjit_spec_ops": (_c_int, [*_BUF]),
    "flashjit_engine_render": (_c_int, [E, _c_char_p, *_BUF]),
    "flashjit_engine_build": (_c_int, [E, _c_char_p, _c_char_p, *_BUF]),
    "flashjit_engine_get_stats": (_c_int, [E, _P(EngineStats)]),
    "flashjit_cache_ls": (_c_int, [E, *_BUF]),
    "flashjit_cache_verify": (_c_int, [E, _c_int, _P(_c_int64), _P(_c_int64), _P(_c_int64),
                                       *_BUF]),
    "flashjit_cache_gc": (_c_int, [E, _c_int64, _P(_c_int64)]),
    "flashjit_cache_prune": (_c_int, [E, _P(_c_int64)]),
    "flashjit_cache_clear": (_c_int, [E]),
    "flashjit_bundle_export": (_c_int, [E, _c_char_p, _c_char_p, _c_char_p, *_BUF]),
    "flashjit_bundle_import": (_c_int, [E, _c_char_p, _c_char_p, _P(_c_int64)]),
    "flashjit_bundle_inspect": (_c_int, [_c_char_p, *_BUF]),
    "flashjit_bundle_inspect_trusted": (_c_int, [_c_char_p, _c_char_p, _c_int, *_BUF]),
    "flashjit_bundle_keygen": (_c_int, [_c_char_p, _c_char_p, *_BUF]),
    "flashjit_call_packed": (_c_int, [_c_void_p]),
    "flashjit_packed_op_name": (_c_char_p, [_c_int32]),
    "flashjit_packed_op_num_tensors": (_c_int32, [_c_int32]),
    # norm
    "flashjit_rmsnorm": (_c_int, [E, T, T, T, _c_float, S]),
    "flashjit_gemma_rmsnorm": (_c_int, [E, T, T, T, _c_float, S]),
    "flashjit_fused_add_rmsnorm": (_c_int, [E, T, T, T, _c_float, S]),
    "flashjit_gemma_fused_add_rmsnorm": (_c_int, [E, T, T, T, _c_float, S]),
    "flashjit_layernorm": (_c_int, [E, T, T, T, T, _c_float, S]),
    # rope
    "flashjit_rope_options_init": (None, [_P(RopeOptions)]),
    "flashjit_llama31_rope_options_init": (None, [_P(RopeOptions)]),
    "flashjit_apply_rope": (_c_int, [E, T, T, T, T, T, T, _c_void_p, S]),
    "flashjit_apply_rope_inplace": (_c_int, [E, T, T, T, T, _c_void_p, S]),
    "flashjit_apply_rope_pos_ids": (_c_int, [E, T, T, T, T, T, _c_void_p, S]),
    "flashjit_apply_rope_pos_ids_inplace": (_c_int, [E, T, T, T, _c_void_p, S]),
    "flashjit_apply_llama31_rope": (_c_int, [E, T, T, T, T, T, T, _c_void_p, S]),
    "flashjit_apply_llama31_rope_inplace": (_c_int, [E, T, T, T, T, _c_void_p, S]),
    "flashjit_apply_llama31_rope_pos_ids": (_c_int, [E, T, T, T, T, T, _c_void_p, S]),
    "flashjit_apply_llama31_rope_pos_ids_inplace": (_c_int, [E, T, T, T, _c_void_p, S]),
    "flashjit_apply_rope_with_cos_sin_cache": (
        _c_int, [E, T, T, T, T, T, _c_int64, T, _c_int, _c_int64, S]),
    "flashjit_apply_rope_with_cos_sin_cache_inplace": (
        _c_int, [E, T, T, T, _c_int64, T, _c_int, _c_int64, S]),
    # activation
    "flashjit_silu_and_mul": (_c_int, [E, T, T, S]),
    "flashjit_gelu_and_mul": (_c_int, [E, T, T, S]),
    "flashjit_gelu_tanh_and_mul": (_c_int, [E, T, T, S]),
    # cascade
    "flashjit_merge_state": (_c_int, [E, T, T, T, T, T, T, S]),
    "flashjit_merge_state_in_place": (_c_int, [E, T, T, T, T, T, S]),
    "flashjit_merge_states": (_c_int, [E, T, T, T, T, S]),
    # page
    "flashjit_append_paged_kv_cache": (
        _c_int, [E, T, T, T, T, T, T, T, T, T, _c_int, _c_float, _c_float, S]),
    "flashjit_append_paged_kv_cache_combined": (
        _c_int, [E, T, T, T, T, T, T, T, T, _c_int, _c_float, _c_float, S]),
    "flashjit_get_batch_indices_positions": (_c_int, [E, T, T, T, T, S]),
    # sampling
    "flashjit_softmax": (_c_int, [E, T, T, _c_float, T, S]),
    "flashjit_sampling_from_probs": (_c_int, [E, T, T, _c_void_p, S]),
    "flashjit_sampling_from_logits": (_c_int, [E, T, T, _c_void_p, S]),
    "flashjit_top_k_sampling_from_probs": (_c_int, [E, T, T, _c_int, T, _c_void_p, S]),
    "flashjit_top_p_sampling_from_probs": (_c_int, [E, T, T, _c_float, T, _c_void_p, S]),
    "flashjit_min_p_sampling_from_probs": (_c_int, [E, T, T, _c_float, T, _c_void_p, S]),
    "flashjit_top_k_top_p_sampling_from_probs": (
        _c_int, [E, T, T, _c_int, T, _c_float, T, _c_int, _c_void_p, S]),
    "flashjit_top_k_top_p_sampling_from_logits": (
        _c_int, [E, T, T, _c_int, T, _c_float, T, _c_int, _c_void_p, S]),
    "flashjit_top_k_renorm_probs": (_c_int, [E, T, T, _c_int, T, S]),
    "flashjit_top_p_renorm_probs": (_c_int, [E, T, T, _c_float, T, S]),
    "flashjit_top_k_mask_logits": (_c_int, [E, T, T, _c_int, T, S]),
    "flashjit_chain_speculative_sampling": (
        _c_int, [E, T, T, T, T, T, T, _c_uint64, _c_uint64, S]),
    # decode
    "flashjit_decode_options_init": (None, [_P(DecodeOptions)]),
    "flashjit_single_decode_workspace_bytes": (_c_size_t, [_c_int64, _c_int64]),
    "flashjit_single_decode": (
        _c_int, [E, T, T, T, T, T, _c_int, _c_void_p, _c_void_p, _c_size_t, S]),
    "flashjit_batch_decode_config_init": (None, [_P(BatchDecodeConfig)]),
    "flashjit_batch_decode_create": (_c_int, [E, _P(BatchDecodeConfig), _P(_c_void_p)]),
    "flashjit_batch_decode_destroy": (_c_int, [E]),
    "flashjit_batch_decode_workspace_bytes": (_c_int, [E, _P(_c_size_t)]),
    "flashjit_batch_decode_plan": (
        _c_int, [E, _c_void_p, _c_void_p, _c_int32, _c_void_p, _c_void_p, _c_size_t, _c_void_p,
                 _c_int64, S]),
    "flashjit_batch_decode_run": (_c_int, [E, T, T, T, T, T, T, S]),
    "flashjit_batch_decode_run_combined": (_c_int, [E, T, T, T, T, T, S]),
}

missing = []
for _name, (_res, _args) in _SIGNATURES.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        missing.append(_name)
        continue
    _fn.restype = _res
    _fn.argtypes = _args

if missing:
    raise ImportError(f"flashjit: {library_path} lacks {', '.join(missing)}: the library is older "
                      "than this package (rebuild it, or set FLASHJIT_LIBRARY)")

if lib.flashjit_abi_version() != 1:
    raise ImportError(f"flashjit: {library_path} has C ABI version {lib.flashjit_abi_version()}, "
                      "this package needs 1")


def last_error():
    return lib.flashjit_last_error().decode("utf-8", "replace")


def raise_error(status):
    """Raises the exception for a non-zero flashjit_status, with this thread's message."""
    raise errors.error_for(status, last_error())


def call_json(fn, *args):
    """Calls a JSON-producing C function twice (size query, then fill) and returns the text."""
    needed = ctypes.c_size_t(0)
    rc = fn(*args, None, 0, ctypes.byref(needed))
    if rc:
        raise_error(rc)
    buf = ctypes.create_string_buffer(needed.value)
    rc = fn(*args, buf, needed.value, ctypes.byref(needed))
    if rc:
        raise_error(rc)
    return buf.value.decode("utf-8")


def call_json_once(fn, *args, size=1 << 16):
    """For calls that act (build, verify, export): one call with a buffer, regrown only for the
    report's text (the action is not repeated: the report is taken as truncated)."""
    needed = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(size)
    rc = fn(*args, buf, size, ctypes.byref(needed))
    if rc:
        raise_error(rc)
    return buf.value.decode("utf-8"), needed.value <= size
