"""Tensors and streams for the C ABI.

A tensor argument becomes a DLTensor packed into a per-thread buffer ("slot"): for PyTorch
tensors the struct is filled straight from data_ptr()/shape/stride()/dtype/get_device() (no
DLPack capsule, no allocation); any other object with __dlpack__ is exported through DLPack and
its DLTensor is passed as is (the capsule stays alive until the slot is reused on this thread).
The C library only reads a DLTensor during the call, so slots are reused call after call.

The default stream is PyTorch's current stream of the tensor's device (the NULL stream for
non-PyTorch tensors), as FlashInfer does.
"""

import ctypes
import struct
import threading

_KDL_CPU = 1
_KDL_CUDA = 2
_HEADER = 48  # sizeof(DLTensor)
_MAX_DIMS = 6
_SLOT_BYTES = _HEADER + 16 * _MAX_DIMS
_NUM_SLOTS = 16

# DLTensor: data, device {type, id}, ndim, dtype {code, bits, lanes}, shape*, strides*,
# byte_offset; then shape[n] and strides[n] in the same slot.
_PACK = [struct.Struct("<QiiiBBHQQQ" + "q" * (2 * n)) for n in range(_MAX_DIMS + 1)]


class _Slots(threading.local):
    def __init__(self):
        self.bufs = [ctypes.create_string_buffer(_SLOT_BYTES) for _ in range(_NUM_SLOTS)]
        self.addrs = [ctypes.addressof(b) for b in self.bufs]
        self.keep = [None] * _NUM_SLOTS


_slots = _Slots()

_torch = None  # the torch module once looked up; False when it is not installed
_Tensor = ()  # torch.Tensor
_DTYPES = {}  # torch.dtype -> (DLPack code, bits)
_raw_stream = None


def _init_torch():
    global _torch, _Tensor, _DTYPES, _raw_stream
    try:
        import torch
    except ImportError:
        _torch = False
        return
    _torch = torch
    _Tensor = torch.Tensor
    d = {
        torch.float16: (2, 16), torch.bfloat16: (4, 16), torch.float32: (2, 32),
        torch.float64: (2, 64), torch.int8: (0, 8), torch.int16: (0, 16), torch.int32: (0, 32),
        torch.int64: (0, 64), torch.uint8: (1, 8), torch.bool: (6, 8),
    }
    for name, code in (("float8_e4m3fn", 10), ("float8_e5m2", 12), ("float8_e4m3fnuz", 11),
                       ("float8_e5m2fnuz", 13)):
        if hasattr(torch, name):
            d[getattr(torch, name)] = (code, 8)
    _DTYPES = d
    getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if getter is not None:
        _raw_stream = getter
    else:
        _raw_stream = lambda index: torch.cuda.current_stream(index).cuda_stream  # noqa: E731


def torch_module():
    if _torch is None:
        _init_torch()
    return _torch or None


def dl(t, slot):
    """The address of a DLTensor describing `t` (None -> NULL). `slot` < 16, distinct per
    argument of one call."""
    if t is None:
        return None
    if _torch is None:
        _init_torch()
    if isinstance(t, _Tensor):
        code_bits = _DTYPES.get(t.dtype)
        if code_bits is None:
            code_bits = (255, t.element_size() * 8)  # refused by the library with its message
        shape = t.shape
        n = len(shape)
        if n > _MAX_DIMS:
            raise ValueError(f"flashjit: tensor has {n} dims, at most {_MAX_DIMS} are supported")
        index = t.get_device()
        addr = _slots.addrs[slot]
        _PACK[n].pack_into(_slots.bufs[slot], 0, t.data_ptr(),
                           _KDL_CUDA if index >= 0 else _KDL_CPU, index if index >= 0 else 0,
                           n, code_bits[0], code_bits[1], 1, addr + _HEADER,
                           addr + _HEADER + 8 * n, 0, *shape, *t.stride())
        return addr
    return _from_dlpack(t, slot)


_PyCapsule_GetName = ctypes.pythonapi.PyCapsule_GetName
_PyCapsule_GetName.restype = ctypes.c_char_p
_PyCapsule_GetName.argtypes = [ctypes.py_object]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(obj, slot):
    ptr, capsule = export_dlpack(obj)
    _slots.keep[slot] = capsule  # the producer frees it when the capsule dies
    return ptr


def export_dlpack(obj):
    """(address of the DLTensor, the capsule that owns it) for an object with __dlpack__."""
    export = getattr(obj, "__dlpack__", None)
    if export is None:
        raise TypeError(f"flashjit: expected a torch.Tensor or an object with __dlpack__, got "
                        f"{type(obj).__name__}")
    try:
        capsule = export(max_version=(1, 0))
    except TypeError:
        capsule = export()
    name = _PyCapsule_GetName(capsule)
    ptr = _PyCapsule_GetPointer(capsule, name)
    if name == b"dltensor_versioned":
        ptr += 32  # DLManagedTensorVersioned: version, manager_ctx, deleter, flags, dl_tensor
    elif name != b"dltensor":
        raise TypeError(f"flashjit: __dlpack__ returned a capsule named {name!r}")
    return ptr, capsule


def stream_of(t):
    """PyTorch's current raw stream of t's device; 0 (the NULL stream) otherwise."""
    if _torch and isinstance(t, _Tensor):
        index = t.get_device()
        if index >= 0:
            return _raw_stream(index)
    return None


def require_torch(what):
    torch = torch_module()
    if torch is None:
        raise TypeError(f"flashjit: {what} needs PyTorch (to allocate the output); pass the "
                        "output tensor explicitly")
    return torch
