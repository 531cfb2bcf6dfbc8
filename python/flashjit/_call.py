"""The per-call fast path: one packed argument block, one ctypes call (flashjit_call_packed).

Each op call writes its tensors (data pointer, device, dtype, shape, strides) and scalars into a
per-thread buffer laid out as flashjit_packed_call (include/flashjit/flashjit.h) with one
struct.pack_into per tensor plus one for the header, then makes a single ctypes call with the
buffer's address. Nothing is allocated per call on the PyTorch path; the C side runs the plain
C function of the op, so every check and message is the same as for a direct C call.

Thread safety: ctypes releases the GIL during the call, so the buffer is per thread
(threading.local); a DLPack capsule lives in a local list until the call has returned.

When the compiled extension _flashjit_fast.abi3.so (python/ext/_flashjit_fast.c, stable ABI) is
found beside the loaded libflashjit.so or in this directory, `call` is its C function: the same
block filled on the C stack and flashjit_call_packed called directly; calls it does not cover
(DLPack objects, a tensor type or dtype not seen yet, arguments the Python path refuses) are
handed to _call_python, so results and exceptions are the same. FLASHJIT_PYTHON_FAST=0 keeps
the Python implementation.
"""

import ctypes
import importlib.util
import os
import struct
import sys
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
MERGE_STATE, MERGE_STATE_IN_PLACE, MERGE_STATES = 80, 81, 82


_KINDS = {}  # header Struct -> its scalars' formats ("d" * len(f) + i), for the C path


def header(f="", i=""):
    """The struct for the block's header with these scalars: op, num_tensors, handle, stream,
    then f[0..] in `f`'s formats (d) and i[0..] in `i`'s (q signed, Q unsigned/addresses)."""
    assert len(f) <= 8 and len(i) <= 8 and set(f) <= {"d"} and set(i) <= {"q", "Q"}
    s = struct.Struct("<iiQQ" + f + "x" * (8 * (8 - len(f))) + i)
    _KINDS[s] = f + i
    return s


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


def _call_python(op, hdr, handle, tensors, *scalars):
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


# The same function in C (python/ext/_flashjit_fast.c), when the extension is found: it fills
# the block on its stack and calls the library directly, and hands any call it does not cover
# (DLPack objects, a new tensor type or dtype, bad arguments) to _call_python above.
call = _call_python
fast = None  # the loaded _flashjit_fast module, or None
fast_path = None  # the file it was loaded from
fast_error = None  # why a present extension was not used


def _fast_candidates():
    seen = []
    lib = _lib.library_path
    if os.sep in lib:
        for d in (os.path.dirname(os.path.abspath(lib)), os.path.dirname(os.path.realpath(lib))):
            if d not in seen:
                seen.append(d)
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in seen:
        seen.append(here)
    return [os.path.join(d, "_flashjit_fast.abi3.so") for d in seen]


def _load_fast():
    """The extension beside the loaded libflashjit.so, else in this package's directory,
    unless FLASHJIT_PYTHON_FAST=0. It must call the very library ctypes loaded."""
    global call, fast, fast_path, fast_error
    if os.environ.get("FLASHJIT_PYTHON_FAST", "") == "0" or sys.version_info < (3, 11):
        return
    for path in _fast_candidates():
        if not os.path.exists(path):
            continue
        try:
            spec = importlib.util.spec_from_file_location("flashjit._flashjit_fast", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except ImportError as e:
            fast_error = f"{path}: {e}"
            continue
        if module.call_packed_address() != ctypes.cast(_fn, ctypes.c_void_p).value:
            fast_error = f"{path}: linked to another copy of libflashjit than {_lib.library_path}"
            continue
        module.init(globals(), _call_python, _lib.raise_error, _KINDS, engine)
        call, fast, fast_path, fast_error = module.call, module, path, None
        return


_load_fast()
