"""A stand-in for torch.Tensor on a machine with no PyTorch and no GPU: an object with the
accessors the package's PyTorch fast path reads (data_ptr(), shape, stride(), dtype,
get_device(), element_size()), at fake device addresses. `use_fake_torch()` points the packed
call path (flashjit._call) at it, so that the CPU tests and the CPU dry-run overhead benchmark
run the same packing code as real PyTorch tensors (dry-run engines never touch the memory)."""

_DTYPES = {
    "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64), "uint8": (1, 8),
    "bool": (6, 8), "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8),
    "complex64": None,  # a dtype flashjit does not map: refused by the library
}

_next = [0x7E0000000000]


class FakeTorchTensor:
    __slots__ = ("shape", "dtype", "_strides", "_device", "_data")

    def __init__(self, shape, dtype="bfloat16", strides=None, device=0, data=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.shape):
                strides.append(acc)
                acc *= max(s, 1)
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)
        self._device = device
        if data is None:
            data = _next[0]
            _next[0] += 1 << 32
        self._data = data

    def data_ptr(self):
        return self._data

    def stride(self):
        return self._strides

    def get_device(self):
        return self._device

    @property
    def device(self):  # what torch.empty(..., device=t.device) needs where torch exists
        return f"cuda:{self._device}" if self._device >= 0 else "cpu"

    def element_size(self):
        return {"complex64": 8}.get(self.dtype, (_DTYPES.get(self.dtype) or (0, 8))[1] // 8)

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def t(*shape, dtype="bfloat16", **kw):
    return FakeTorchTensor(shape, dtype, **kw)


def use_fake_torch(monkeypatch=None, streams=None):
    """Makes flashjit._call treat FakeTorchTensor as torch.Tensor. `streams` (a list) records
    the device index of each current-stream query; the stream returned is 0 (NULL).
    With a pytest monkeypatch the change is undone after the test."""
    from flashjit import _call

    def raw_stream(index):
        if streams is not None:
            streams.append(index)
        return 0

    values = {
        "_ready": True, "_Tensor": FakeTorchTensor, "_tensor_types": {FakeTorchTensor},
        "_DTYPES": _call.dtype_words({k: v for k, v in _DTYPES.items() if v}),
        "_raw_stream": raw_stream,
    }
    for name, value in values.items():
        if monkeypatch is not None:
            monkeypatch.setattr(_call, name, value)
        else:
            setattr(_call, name, value)
