"""The per-call fast path: one packed argument block, one ctypes call (flashjit_call_packed).

Each op call writes its tensors (data pointer, device, dtype, shape, strides) and scalars into a
per-thread buffer laid out as flashjit_packed_call (include/flashjit/flashjit.h) with one
struct.pack_into per tensor plus one for the header, then makes a single ctypes call with the
buffer's address. Nothing is allocated per call on the PyTorch path; the C side runs the plain
C function of the op, so every check and message is the same as for a direct C call.

Thread safety: ctypes releases the GIL during the call, so the buffer is per thread
(threading.local); a DLPack capsule lives in a local list until the call has returned.
"""

import ctypes
import struct
import threading

from . import _lib, _tensor, engine

_MAX_TENSORS = 12
_MAX_DIMS = 6
_HEADER = 152  # offsetof(flashjit_packed_call, tensors)
_TENSOR = 120  # sizeof(flashjit_packed_tensor)
_BYTES = _HEADER + _MAX_TENSORS * _TENSOR
_ABSENT = -1
_DLTENSOR = -2
_KDL_CPU = 1
_KDL_CUDA = 2

# flashjit_packed_op numbers (stable).
RMSNORM, GEMMA_RMSNORM, FUSED_ADD_RMSNORM, GEMMA_FUSED_ADD_RMSNORM, LAYERNORM = 1, 2, 3, 4, 5
APPLY_ROPE, APPLY_ROPE_INPLACE, APPLY_ROPE_POS_IDS, APPLY_ROPE_POS_IDS_INPLACE = 10, 11, 12, 13
APPLY_LLAMA31_ROPE, APPLY_LLAMA31_ROPE_INPLACE = 14, 15
APPLY_LLAMA31_ROPE_POS_IDS, APPLY_LLAMA31_ROPE_POS_IDS_INPLACE = 16, 17
APPLY_ROPE_WITH_COS_SIN_CACHE, APPLY_ROPE_WITH_COS_SIN_CACHE_INPLACE = 18, 19
SILU_AND_MUL, GELU_AND_MUL, GELU_TANH_AND_MUL = 30, 31, 32
APPEND_PAGED_KV_CACHE, APPEND_PAGED_KV_CACHE_COMBINED, GET_BATCH_INDICES_POSITIONS = 40, 41, 42
SOFTMAX, SAMPLING_FROM_PROBS, SAMPLING_FROM_LOGITS = 50, 51, 52
TOP_K_SAMPLING_FROM_PROBS, TOP_P_SAMPLING_FROM_PROBS, MIN_P_SAMPLING_FROM_PROBS = 53, 54, 55
TOP_K_TOP_P_SAMPLING_FROM_PROBS, TOP_K_TOP_P_SAMPLING_FROM_LOGITS = 56, 57
TOP_K_RENORM_PROBS, TOP_P_RENORM_PROBS, TOP_K_MASK_LOGITS = 58, 59, 60
CHAIN_SPECULATIVE_SAMPLING = 61
SINGLE_DECODE, BATCH_DECODE_RUN, BATCH_DECODE_RUN_COMBINED = 70, 71, 72


def header(f="", i=""):
    """The struct for the block's header with these scalars: op, num_tensors, handle, stream,
    then f[0..] in `f`'s formats (d) and i[0..] in `i`'s (q signed, Q unsigned/addresses)."""
    assert len(f) <= 8 and len(i) <= 8
    return struct.Struct("<iiQQ" + f + "x" * (8 * (8 - len(f))) + i)


# flashjit_packed_tensor with n dims: data, device_type, device_id, ndim, dtype (code, bits,
# lanes), shape[6] (n written), strides[6] (n written).
_PACK = [struct.Struct("<QiiiBBH" + "q" * n + "x" * (8 * (_MAX_DIMS - n)) + "q" * n).pack_into
         for n in range(_MAX_DIMS + 1)]
_PACK_REF = struct.Struct("<Qiii").pack_into  # data, device_type, device_id, ndim


class _Buffers(threading.local):
    def __init__(self):
        self.buf = ctypes.create_string_buffer(_BYTES)
        self.addr = ctypes.addressof(self.buf)


_tls = _Buffers()
_fn = _lib.lib.flashjit_call_packed
_fn.argtypes = [ctypes.c_void_p]
_fn.restype = ctypes.c_int
_raise = _lib.raise_error

_ready = False
_Tensor = None  # torch.Tensor (a class no object has while PyTorch is missing)
_tensor_types = set()  # subclasses of torch.Tensor seen (nn.Parameter, ...)
_DTYPES = {}
_raw_stream = None


class _NoTorch:
    pass


def _init():
    global _ready, _Tensor, _DTYPES, _raw_stream
    torch = _tensor.torch_module()
    if torch is not None:
        _Tensor = torch.Tensor
        _DTYPES = _tensor._DTYPES
        _raw_stream = _tensor._raw_stream
    else:
        _Tensor = _NoTorch
    _tensor_types.add(_Tensor)
    _ready = True


def _new_tensor_type(t):
    """True for a torch.Tensor subclass seen for the first time (then remembered)."""
    if isinstance(t, _Tensor):
        _tensor_types.add(t.__class__)
        return True
    return False


def _unknown_dtype(t):
    return (255, t.element_size() * 8)  # refused by the library with its message


def call(op, hdr, handle, tensors, *scalars):
    """Packs and runs one op. `handle`: a C handle, or None for the default engine's.
    `tensors`: torch tensors, objects with __dlpack__, or None (an absent optional tensor).
    The stream is PyTorch's current stream of the first CUDA tensor's device (NULL otherwise)."""
    if not _ready:
        _init()
    buf = _tls.buf
    off = _HEADER
    dev = -1
    keep = None
    for t in tensors:
        if t is None:
            _PACK_REF(buf, off, 0, 0, 0, _ABSENT)
        elif t.__class__ in _tensor_types or _new_tensor_type(t):
            shape = t.shape
            n = len(shape)
            if n > _MAX_DIMS:
                raise ValueError(f"flashjit: tensor has {n} dims, at most {_MAX_DIMS} are "
                                 "supported")
            d = t.get_device()
            cb = _DTYPES.get(t.dtype) or _unknown_dtype(t)
            if d >= 0:
                _PACK[n](buf, off, t.data_ptr(), _KDL_CUDA, d, n, cb[0], cb[1], 1, *shape,
                         *t.stride())
                if dev < 0:
                    dev = d
            else:
                _PACK[n](buf, off, t.data_ptr(), _KDL_CPU, 0, n, cb[0], cb[1], 1, *shape,
                         *t.stride())
        else:
            ptr, capsule = _tensor.export_dlpack(t)
            if keep is None:
                keep = []
            keep.append(capsule)  # the producer frees the tensor when the capsule dies
            _PACK_REF(buf, off, ptr, 0, 0, _DLTENSOR)
        off += _TENSOR
    if handle is None:
        e = engine._default
        handle = e._handle if e is not None else None
        if handle is None:
            handle = engine.get_default_engine().handle  # creates it, or raises if closed
    hdr.pack_into(buf, 0, op, len(tensors), handle,
                  _raw_stream(dev) if dev >= 0 and _raw_stream is not None else 0, *scalars)
    rc = _fn(_tls.addr)
    if rc:
        _raise(rc)
    return keep
