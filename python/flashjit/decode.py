"""Decode attention (FlashInfer's flashinfer.decode): single_decode_with_kv_cache,
BatchDecodeWithPagedKVCacheWrapper (plan/run, CUDA-graph mode) and
CUDAGraphBatchDecodeWithPagedKVCacheWrapper. LSE outputs are base 2."""

import array
import ctypes
import math
import threading

from . import _call, _lib
from ._tensor import dl, require_torch, stream_of, torch_module
from .engine import get_default_engine
from .errors import InvalidArgumentError
from .page import layout_code

_c = _lib.lib
_raise = _lib.raise_error

_call_op = _call.call
_SINGLE = _call.header("", "qQQQ")  # layout, options address, workspace address, bytes
_RUN = _call.header()

_POS_ENCODING = {"NONE": (0, 0), "ROPE_LLAMA": (1, 0), "ALIBI": (0, 1)}

_DTYPE_NAMES = {
    "float16": (2, 16), "half": (2, 16), "fp16": (2, 16), "f16": (2, 16),
    "bfloat16": (4, 16), "bf16": (4, 16),
    "float8_e4m3fn": (10, 8), "e4m3": (10, 8), "fp8_e4m3": (10, 8),
    "float8_e5m2": (12, 8), "e5m2": (12, 8), "fp8_e5m2": (12, 8),
}


def _dtype_code(dtype, what):
    """(DLPack code, bits) of a torch.dtype or a dtype name."""
    name = str(dtype)
    if name.startswith("torch."):
        name = name[len("torch."):]
    try:
        return _DTYPE_NAMES[name]
    except KeyError:
        raise InvalidArgumentError(f"{what}: dtype {dtype!r} not supported; allowed float16, "
                                   "bfloat16, float8_e4m3fn, float8_e5m2") from None


_OPTIONS = {}


def _options(pos_encoding_mode, window_left, logits_soft_cap, sm_scale, rope_scale, rope_theta,
             q_scale, k_scale, v_scale, head_dim, sinks=None):
    """(address, DecodeOptions), cached per argument tuple (sinks: not cached). Cached
    options are never freed: another thread may be inside a call that reads them."""
    key = (pos_encoding_mode, window_left, logits_soft_cap, sm_scale, rope_scale, rope_theta,
           q_scale, k_scale, v_scale, head_dim)
    if sinks is None:
        ref = _OPTIONS.get(key)
        if ref is not None:
            return ref
    try:
        rope, alibi = _POS_ENCODING[pos_encoding_mode]
    except KeyError:
        raise InvalidArgumentError(f"pos_encoding_mode {pos_encoding_mode!r}: allowed NONE, "
                                   "ROPE_LLAMA, ALIBI") from None
    o = _lib.DecodeOptions()
    _c.flashjit_decode_options_init(ctypes.byref(o))
    scale = sm_scale
    if q_scale is not None:
        scale = (scale if scale is not None else 1.0 / math.sqrt(head_dim)) * float(q_scale)
    o.sm_scale = 0.0 if scale is None else float(scale)
    o.logits_soft_cap = 0.0 if not logits_soft_cap else float(logits_soft_cap)
    o.window_left = -1 if window_left is None else int(window_left)
    o.alibi = alibi
    o.rope = rope
    if rope_scale is not None:
        o.rope_scale = float(rope_scale)
    if rope_theta is not None:
        o.rope_theta = float(rope_theta)
    if k_scale is not None:
        o.k_scale = float(k_scale)
    if v_scale is not None:
        o.v_scale = float(v_scale)
    if sinks is not None:
        o.sinks = dl(sinks, 15)  # read during the next call on this thread
        return ctypes.addressof(o), o
    ref = ctypes.addressof(o), o
    if len(_OPTIONS) < 4096:  # beyond that: built per call, kept alive by the caller
        _OPTIONS[key] = ref
    return ref


class _SingleWorkspaces(threading.local):
    """This thread's single-decode workspaces: {(device index, raw stream, Hq, D): (uint8
    tensor, address, bytes)}. One per thread and per stream, so that two decodes running at
    once (two threads, or one thread on two streams) never share one; a workspace is
    allocated on the stream that uses it (PyTorch's caching allocator then reuses its memory
    only in that stream's order once the thread is gone)."""

    def __init__(self):
        self.by_key = {}


_single_workspace = _SingleWorkspaces()


def _single_decode_workspace(q, num_qo_heads, head_dim):
    get_device = getattr(q, "get_device", None)
    index = get_device() if get_device is not None else -1
    if index < 0:
        return None, 0
    if not _call._ready:
        _call._init()
    raw_stream = _call._raw_stream  # the stream the call will use: q is its first tensor
    key = (index, raw_stream(index) if raw_stream is not None else 0, num_qo_heads, head_dim)
    by_key = _single_workspace.by_key
    hit = by_key.get(key)
    if hit is None:
        torch = torch_module()
        if torch is None:
            return None, 0
        need = _c.flashjit_single_decode_workspace_bytes(num_qo_heads, head_dim)
        ws = torch.empty(max(need, 1), dtype=torch.uint8, device=q.device)
        hit = by_key[key] = (ws, ws.data_ptr(), need)
    return hit[1], hit[2]


def single_decode_with_kv_cache(q, k, v, kv_layout="NHD", pos_encoding_mode="NONE",
                                use_tensor_cores=False, q_scale=None, k_scale=None, v_scale=None,
                                window_left=-1, logits_soft_cap=None, sm_scale=None,
                                rope_scale=None, rope_theta=None, return_lse=False, out=None,
                                lse=None, sinks=None):
    """q [Hq, D]; k, v [kv_len, Hkv, D] (NHD) or [Hkv, kv_len, D] (HND). Returns out [Hq, D]
    (and lse f32 [Hq], base 2, with return_lse). use_tensor_cores is ignored."""
    num_qo_heads, head_dim = q.shape[0], q.shape[-1]
    if out is None:
        out = require_torch("single_decode_with_kv_cache").empty_like(q)
    if return_lse and lse is None:
        torch = require_torch("single_decode_with_kv_cache")
        lse = torch.empty(num_qo_heads, dtype=torch.float32, device=q.device)
    ws, ws_bytes = _single_decode_workspace(q, num_qo_heads, head_dim)
    opts = _options(pos_encoding_mode, window_left, logits_soft_cap, sm_scale, rope_scale,
                    rope_theta, q_scale, k_scale, v_scale, head_dim, sinks)
    _call_op(_call.SINGLE_DECODE, _SINGLE, None, (q, k, v, out, lse if return_lse else None),
             layout_code(kv_layout), opts[0], ws or 0, ws_bytes)
    return (out, lse) if return_lse else out


def _host_int32(x, what):
    """(keepalive, address, length) of x as host int32."""
    torch = torch_module()
    if torch is not None and isinstance(x, torch.Tensor):
        h = x.to(device="cpu", dtype=torch.int32).contiguous()
        return h, h.data_ptr(), h.numel()
    try:
        a = array.array("i", [int(v) for v in x])
    except TypeError:
        raise InvalidArgumentError(f"{what}: expected a tensor or a sequence of ints") from None
    return a, a.buffer_info()[0], len(a)


def _buffer(x):
    """(address, bytes) of a device buffer (a torch tensor, or anything with data_ptr()
    and nbytes)."""
    nbytes = getattr(x, "nbytes", None)
    if nbytes is None:
        nbytes = x.numel() * x.element_size()
    return x.data_ptr(), int(nbytes)


def _device_of(x):
    get_device = getattr(x, "get_device", None)
    if get_device is not None:
        return max(0, get_device())
    return 0


class BatchDecodeWithPagedKVCacheWrapper:
    """FlashInfer's batch decode wrapper over flashjit_batch_decode.

    The C wrapper is made at plan() time (flashjit needs heads, head_dim, page size and dtypes
    to size its workspace) and remade when those change or a larger batch comes (not in
    CUDA-graph mode, where the batch bound is the indptr buffer's)."""

    def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False,
                 use_tensor_cores=False, paged_kv_indptr_buffer=None,
                 paged_kv_indices_buffer=None, paged_kv_last_page_len_buffer=None,
                 backend="auto", jit_args=None):
        self._layout = layout_code(kv_layout)
        self._kv_layout = kv_layout
        self._workspace = float_workspace_buffer
        self._use_cuda_graph = bool(use_cuda_graph)
        self._indptr_buf = paged_kv_indptr_buffer
        self._indices_buf = paged_kv_indices_buffer
        self._last_page_len_buf = paged_kv_last_page_len_buffer
        if self._use_cuda_graph and paged_kv_indptr_buffer is None:
            raise InvalidArgumentError(
                "use_cuda_graph=True needs paged_kv_indptr_buffer (its length - 1 bounds the "
                "batch) and paged_kv_indices_buffer")
        self._handle = None
        self._engine = None
        self._key = None
        self._max_batch = 0
        self._plan = None  # what run() needs: batch, indices, options key, head_dim

    @property
    def is_cuda_graph_enabled(self):
        return self._use_cuda_graph

    def reset_workspace_buffer(self, float_workspace_buffer, int_workspace_buffer=None):
        self._workspace = float_workspace_buffer

    def _destroy(self):
        if self._handle is not None:
            _c.flashjit_batch_decode_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self._destroy()
        except Exception:
            pass

    def _ensure(self, num_qo_heads, num_kv_heads, head_dim, page_size, q_code, kv_code,
                batch_size):
        device = _device_of(self._workspace)
        key = (num_qo_heads, num_kv_heads, head_dim, page_size, q_code, kv_code, device,
               get_default_engine())
        if self._use_cuda_graph:
            max_batch = self._indptr_buf.shape[0] - 1
            if batch_size > max_batch:
                raise InvalidArgumentError(
                    f"batch_size {batch_size} exceeds the CUDA-graph wrapper's bound {max_batch} "
                    "(paged_kv_indptr_buffer length - 1)")
        else:
            max_batch = max(batch_size, self._max_batch if key == self._key else 0, 1)
        if self._handle is not None and key == self._key and max_batch <= self._max_batch:
            return
        self._destroy()
        cfg = _lib.BatchDecodeConfig()
        _c.flashjit_batch_decode_config_init(ctypes.byref(cfg))
        cfg.num_qo_heads = num_qo_heads
        cfg.num_kv_heads = num_kv_heads
        cfg.head_dim = head_dim
        cfg.page_size = page_size
        cfg.q_dtype.code, cfg.q_dtype.bits, cfg.q_dtype.lanes = q_code[0], q_code[1], 1
        cfg.kv_dtype.code, cfg.kv_dtype.bits, cfg.kv_dtype.lanes = kv_code[0], kv_code[1], 1
        cfg.layout = self._layout
        cfg.device = device
        cfg.max_batch_size = max_batch
        cfg.cuda_graph = int(self._use_cuda_graph)
        h = ctypes.c_void_p()
        engine = key[-1]
        rc = _c.flashjit_batch_decode_create(engine.handle, ctypes.byref(cfg), ctypes.byref(h))
        if rc:
            _raise(rc)
        self._handle, self._key, self._max_batch, self._engine = h.value, key, max_batch, engine

    def plan(self, indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim,
             page_size, pos_encoding_mode="NONE", window_left=-1, logits_soft_cap=None,
             q_data_type="float16", kv_data_type=None, data_type=None, sm_scale=None,
             rope_scale=None, rope_theta=None, non_blocking=True, fixed_split_size=None,
             disable_split_kv=False, q_scale=None, k_scale=None, v_scale=None, sinks=None):
        """indptr [batch + 1], last_page_len [batch] (host or device; copied to the host),
        indices [indptr[-1]] (device, kept for run()). q_scale/k_scale/v_scale/sinks
        (flashjit extensions) fix those at plan time, so that run() launches only."""
        if data_type is not None:
            q_data_type = kv_data_type = data_type
        q_code = _dtype_code(q_data_type, "q_data_type")
        kv_code = _dtype_code(kv_data_type if kv_data_type is not None else q_data_type,
                              "kv_data_type")
        ip_keep, ip_addr, ip_len = _host_int32(indptr, "indptr")
        lp_keep, lp_addr, lp_len = _host_int32(last_page_len, "last_page_len")
        batch = ip_len - 1
        if batch < 0 or lp_len != batch:
            raise InvalidArgumentError(f"indptr has {ip_len} entries and last_page_len {lp_len}: "
                                       "expected batch + 1 and batch")
        self._ensure(int(num_qo_heads), int(num_kv_heads), int(head_dim), int(page_size),
                     q_code, kv_code, batch)
        if self._use_cuda_graph:
            n = indices.shape[0]
            if self._indices_buf is None or self._indices_buf.shape[0] < n:
                raise InvalidArgumentError("paged_kv_indices_buffer is missing or too small for "
                                           f"{n} page indices")
            if self._indices_buf.data_ptr() != indices.data_ptr():
                self._indices_buf[:n].copy_(indices, non_blocking=True)
            run_indices = self._indices_buf
        else:
            run_indices = indices
        args = (pos_encoding_mode, window_left, logits_soft_cap, sm_scale, rope_scale, rope_theta,
                q_scale, k_scale, v_scale, int(head_dim))
        opts = _options(*args, sinks)
        ws, ws_bytes = _buffer(self._workspace)
        rc = _c.flashjit_batch_decode_plan(self._handle, ip_addr, lp_addr, batch, opts[0], ws,
                                           ws_bytes, None, 0, stream_of(self._workspace))
        if rc:
            _raise(rc)
        self._plan = {"batch": batch, "indices": run_indices, "args": args, "sinks": sinks,
                      "host": (ip_keep, lp_keep), "num_qo_heads": int(num_qo_heads),
                      "ip": ip_addr, "lp": lp_addr}

    begin_forward = plan

    def _replan(self, q_scale, k_scale, v_scale, window_left):
        p = self._plan
        args = list(p["args"])
        for i, v in ((6, q_scale), (7, k_scale), (8, v_scale), (1, window_left)):
            if v is not None:
                args[i] = v
        args = tuple(args)
        if args == p["args"]:
            return
        ws, ws_bytes = _buffer(self._workspace)
        opts = _options(*args, p["sinks"])
        rc = _c.flashjit_batch_decode_plan(self._handle, p["ip"], p["lp"], p["batch"], opts[0],
                                           ws, ws_bytes, None, 0, stream_of(self._workspace))
        if rc:
            _raise(rc)
        p["args"] = args

    def run(self, q, paged_kv_cache, *args, q_scale=None, k_scale=None, v_scale=None, out=None,
            lse=None, return_lse=False, enable_pdl=None, window_left=None, sinks=None):
        """q [batch, Hq, D]; paged_kv_cache a (k_cache, v_cache) tuple or one [pages, 2, ...]
        tensor. Returns out (and lse f32 [batch, Hq], base 2, with return_lse). Scales or a
        window different from plan()'s re-plan first (not capturable in a CUDA graph)."""
        p = self._plan
        if p is None:
            raise InvalidArgumentError("run() before plan()")
        if q_scale is not None or k_scale is not None or v_scale is not None or \
                window_left is not None:
            self._replan(q_scale, k_scale, v_scale, window_left)
        if out is None:
            out = require_torch("BatchDecodeWithPagedKVCacheWrapper.run").empty_like(q)
        if return_lse and lse is None:
            torch = require_torch("BatchDecodeWithPagedKVCacheWrapper.run")
            lse = torch.empty((q.shape[0], q.shape[1]), dtype=torch.float32, device=q.device)
        if isinstance(paged_kv_cache, (tuple, list)):
            k_cache, v_cache = paged_kv_cache
            _call_op(_call.BATCH_DECODE_RUN, _RUN, self._handle,
                     (q, k_cache, v_cache, p["indices"], out, lse if return_lse else None))
        else:
            _call_op(_call.BATCH_DECODE_RUN_COMBINED, _RUN, self._handle,
                     (q, paged_kv_cache, p["indices"], out, lse if return_lse else None))
        return (out, lse) if return_lse else out

    def forward(self, q, paged_kv_cache, *args, **kwargs):
        return self.run(q, paged_kv_cache, *args, **kwargs)

    def run_return_lse(self, q, paged_kv_cache, *args, **kwargs):
        kwargs["return_lse"] = True
        return self.run(q, paged_kv_cache, *args, **kwargs)

    def end_forward(self):
        pass


class CUDAGraphBatchDecodeWithPagedKVCacheWrapper(BatchDecodeWithPagedKVCacheWrapper):
    """The CUDA-graph form: fixed page-table buffers; the batch bound is
    indptr_buffer.shape[0] - 1."""

    def __init__(self, workspace_buffer, indptr_buffer, indices_buffer, last_page_len_buffer,
                 kv_layout="NHD", use_tensor_cores=False):
        super().__init__(workspace_buffer, kv_layout, use_cuda_graph=True,
                         use_tensor_cores=use_tensor_cores,
                         paged_kv_indptr_buffer=indptr_buffer,
                         paged_kv_indices_buffer=indices_buffer,
                         paged_kv_last_page_len_buffer=last_page_len_buffer)
