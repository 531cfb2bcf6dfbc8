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


# flashjit_packed_tensor with n dims: data, device_type, device_id, ndim, dtype as one
# little-endian word (code | bits << 8 | lanes << 16), shape[6] (n written), strides[6] (n
# written). Fewer arguments make pack_into cheaper.
_PACK = tuple(struct.Struct("<QiiiI" + "q" * n + "x" * (8 * (_MAX_DIMS - n)) + "q" * n).pack_into
              for n in range(_MAX_DIMS + 1))
_PACK_REF = struct.Struct("<Qiii").pack_into  # data, device_type, device_id, ndim


class _Buffers(threading.local):
    """This thread's argument block: a bytearray (struct.pack_into writes a memoryview of it,
    the cheapest target) and a ctypes array over the same bytes (passed to C as a pointer)."""

    def __init__(self):
        data = bytearray(_BYTES)
        self.block = (memoryview(data), (ctypes.c_char * _BYTES).from_buffer(data))


_tls = _Buffers()
# No argtypes: a ctypes array argument is passed as a pointer to its first byte, without the
# per-call argument conversion that argtypes costs (about half of a one-argument call).
_fn = ctypes.CDLL(_lib.library_path).flashjit_call_packed
_fn.argtypes = None
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
        _DTYPES = dtype_words(_tensor._DTYPES)
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


def dtype_words(dtypes):
    """{dtype: (code, bits)} -> {dtype: the packed dtype word}."""
    return {k: code | bits << 8 | 1 << 16 for k, (code, bits) in dtypes.items()}


def _unknown_dtype(t):
    return 255 | (t.element_size() * 8) << 8 | 1 << 16  # refused by the library, with why


def call(op, hdr, handle, tensors, *scalars):
    """Packs and runs one op. `handle`: a C handle, or None for the default engine's.
    `tensors`: torch tensors, objects with __dlpack__, or None (an absent optional tensor).
    The stream is PyTorch's current stream of the first CUDA tensor's device (NULL otherwise)."""
    if not _ready:
        _init()
    buf, block = _tls.block
    off = _HEADER
    dev = -1
    keep = None
    try:
        for t in tensors:
            if t is None:
                _PACK_REF(buf, off, 0, 0, 0, _ABSENT)
            elif t.__class__ is _Tensor or t.__class__ in _tensor_types or _new_tensor_type(t):
                shape = t.shape
                d = t.get_device()
                if d >= 0:
                    _PACK[len(shape)](buf, off, t.data_ptr(), _KDL_CUDA, d, len(shape),
                                      _DTYPES[t.dtype], *shape, *t.stride())
                    if dev < 0:
                        dev = d
                else:
                    _PACK[len(shape)](buf, off, t.data_ptr(), _KDL_CPU, 0, len(shape),
                                      _DTYPES[t.dtype], *shape, *t.stride())
            else:
                ptr, capsule = _tensor.export_dlpack(t)
                if keep is None:
                    keep = []
                keep.append(capsule)  # the producer frees the tensor when the capsule dies
                _PACK_REF(buf, off, ptr, 0, 0, _DLTENSOR)
            off += _TENSOR
    except (IndexError, KeyError):
        # Too many dims, or a dtype flashjit does not map: say which, or let the library refuse
        # the dtype (code 255) with its message naming the argument.
        unmapped = False
        for t in tensors:
            if t is not None and (t.__class__ is _Tensor or t.__class__ in _tensor_types):
                if len(t.shape) > _MAX_DIMS:
                    raise ValueError(f"flashjit: tensor has {len(t.shape)} dims, at most "
                                     f"{_MAX_DIMS} are supported") from None
                if t.dtype not in _DTYPES:
                    _DTYPES[t.dtype] = _unknown_dtype(t)
                    unmapped = True
        if not unmapped:
            raise
        return call(op, hdr, handle, tensors, *scalars)
    if handle is None:
        e = engine._default
        handle = e._handle if e is not None else None
        if handle is None:
            handle = engine.get_default_engine().handle  # creates it, or raises if closed
    hdr.pack_into(buf, 0, op, len(tensors), handle,
                  _raw_stream(dev) if dev >= 0 and _raw_stream is not None else 0, *scalars)
    rc = _fn(block)
    if rc:
        _raise(rc)
    return keep

