"""A stand-in for a CUDA tensor with no CUDA: fake, aligned device addresses exported through
__dlpack__ (a real DLPack capsule built with ctypes). For dry-run engines, which validate and
build kernels but never touch the memory: the CPU tests and the prewarm use it."""

import ctypes

_DTYPES = {
    "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
    "int32": (0, 32), "int64": (0, 64), "uint8": (1, 8), "bool": (6, 8),
    "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8),
}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_next_address = [0x7F0000000000]
_alive = []  # managed tensors stay allocated for the process (tests are short)


class FakeCudaTensor:
    def __init__(self, shape, dtype="bfloat16", strides=None, device=0, device_type=2,
                 byte_offset=0, data=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.code, self.bits = _DTYPES[dtype] if isinstance(dtype, str) else dtype
        self.strides = tuple(strides) if strides is not None else None
        self.device = device
        self.device_type = device_type
        self.byte_offset = byte_offset
        if data is None:
            data = _next_address[0]
            _next_address[0] += 1 << 32
        self.data = data
        self.nbytes = self.numel() * self.bits // 8

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def data_ptr(self):
        return self.data + self.byte_offset

    def __dlpack_device__(self):
        return (self.device_type, self.device)

    def __dlpack__(self, stream=None):
        m = _DLManagedTensor()
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*(self.strides or ()))
        m.dl_tensor.data = self.data
        m.dl_tensor.device.device_type = self.device_type
        m.dl_tensor.device.device_id = self.device
        m.dl_tensor.ndim = n
        m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes = (
            self.code, self.bits, 1)
        m.dl_tensor.shape = shape
        m.dl_tensor.strides = strides if self.strides is not None else None
        m.dl_tensor.byte_offset = self.byte_offset
        _alive.append((m, shape, strides))
        # No destructor: the memory is kept in _alive (a real producer frees it in one).
        return _PyCapsule_New(ctypes.addressof(m), b"dltensor", None)


def fake(*shape, dtype="bfloat16", **kw):
    return FakeCudaTensor(shape, dtype, **kw)
