"""The C extension's DLPack exchange-API path (python/ext/_flashjit_fast.c), on the CPU: the fake
PyTorch tensor type is given a DLPack >= 1.2 exchange API (a capsule "dlpack_exchange_api"
whose dltensor_from_py_object_no_sync is a ctypes callback), and the extension must use it only
after it agreed with the accessors, drop it when it disagrees, fails or is too old, and give the
same outcome as the Python implementation on every op either way."""

import ctypes

import pytest

import flashjit
from fake_tensor import _DLDataType as DLDataType
from fake_tensor import _DLDevice as DLDevice
from fake_tensor import _DLTensor as DLTensor
from fake_tensor import _PyCapsule_New
from fake_torch import _DTYPES, FakeTorchTensor, use_fake_torch
from flashjit import _call
from test_packed_call import _every_op_calls, _run_all, cache_dir, engine  # noqa: F401

if _call.fast is None:
    pytest.skip("_flashjit_fast not built", allow_module_level=True)
fast = _call.fast


FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))


class ExchangeApi(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("prev_api", ctypes.c_void_p), ("managed_tensor_allocator", ctypes.c_void_p),
                ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
                ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
                ("dltensor_from_py_object_no_sync", FROM_PY),
                ("current_work_stream", ctypes.c_void_p)]


_NAME = b"dlpack_exchange_api"


class FakeApi:
    """An exchange API for FakeTorchTensor; `lie` alters one field of what it reports."""

    def __init__(self, minor=2, lie=None, fail=False):
        self.calls, self.keep, self.lie, self.fail = 0, [], lie, fail
        self.fn = FROM_PY(self._fill)
        self.api = ExchangeApi(1, minor, None, None, None, None, self.fn, None)
        self.capsule = _PyCapsule_New(ctypes.addressof(self.api), _NAME, None)

    def _fill(self, obj, out):
        self.calls += 1
        if self.fail:
            return -1
        t = ctypes.cast(obj, ctypes.py_object).value
        code, bits = _DTYPES.get(t.dtype) or (5, 64)  # complex64: DLPack's kDLComplex
        n = len(t.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*t.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*t.stride())
        self.keep += [shape, strides]
        d = out.contents
        d.data = t.data_ptr() + (16 if self.lie == "data" else 0)
        d.device = DLDevice(2, t.get_device()) if t.get_device() >= 0 else DLDevice(1, 0)
        d.ndim = n
        d.dtype = DLDataType(code, bits, 1)
        if self.lie == "stride" and n:
            strides[0] += 1
        d.shape, d.strides, d.byte_offset = shape, strides, 0
        return 0


@pytest.fixture(autouse=True)
def forget_the_api():
    yield
    fast.reset_exchange_api()  # the fake APIs die with their test


def install(monkeypatch, api, name="__dlpack_c_exchange_api__"):
    monkeypatch.setattr(FakeTorchTensor, name, api.capsule, raising=False)
    fast.reset_exchange_api()


def compare_with_python(monkeypatch):
    calls = _every_op_calls()
    use_fake_torch(monkeypatch)
    by_python = _run_all(_call._call_python, calls)
    by_fast = _run_all(fast.call, calls)
    for i, (a, b) in enumerate(zip(by_python, by_fast)):
        assert a == b, f"call {i}: {a} vs {b}"


@pytest.mark.parametrize("name", ["__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"])
def test_a_truthful_api_is_used_after_one_check(engine, monkeypatch, name):
    api = FakeApi()
    install(monkeypatch, api, name)
    compare_with_python(monkeypatch)
    assert fast.exchange_api_state() == "on"
    assert api.calls > 20  # every tensor of the fast calls went through it


@pytest.mark.parametrize("lie", ["data", "stride"])
def test_an_api_that_disagrees_with_the_accessors_is_dropped(engine, monkeypatch, lie):
    api = FakeApi(lie=lie)
    install(monkeypatch, api)
    compare_with_python(monkeypatch)
    assert fast.exchange_api_state() == "off"
    # A complex64 tensor it reports (flashjit maps no such dtype: left to the accessors, no
    # verdict), then the one check; nothing after it.
    assert 1 <= api.calls <= 2


def test_a_failing_or_older_api_is_not_used(engine, monkeypatch):
    failing = FakeApi(fail=True)
    install(monkeypatch, failing)
    compare_with_python(monkeypatch)
    assert fast.exchange_api_state() == "off" and failing.calls == 1
    older = FakeApi(minor=1)  # DLPack 1.1 had no exchange API: the layout is not relied on
    install(monkeypatch, older)
    compare_with_python(monkeypatch)
    assert fast.exchange_api_state() == "off" and older.calls == 0


def test_the_environment_turns_it_off(engine, monkeypatch):
    api = FakeApi()
    install(monkeypatch, api)
    monkeypatch.setenv("FLASHJIT_PYTHON_DLPACK_API", "0")
    compare_with_python(monkeypatch)
    assert fast.exchange_api_state() == "off" and api.calls == 0


class FakeParameter(FakeTorchTensor):
    """A registered subclass that inherits the base type's API (as nn.Parameter does)."""

    __slots__ = ()


class OwnApiTensor(FakeTorchTensor):
    """A registered subclass with an exchange API of its own: not the verified one."""

    __slots__ = ()


def test_registered_subclasses_use_the_api_they_inherit(engine, monkeypatch):
    api, other = FakeApi(), FakeApi()
    install(monkeypatch, api)
    monkeypatch.setattr(OwnApiTensor, "__dlpack_c_exchange_api__", other.capsule, raising=False)
    use_fake_torch(monkeypatch)
    monkeypatch.setattr(_call, "_tensor_types", {FakeTorchTensor, FakeParameter, OwnApiTensor})

    def rmsnorm(weight_type):
        x, out = FakeTorchTensor((4, 4096)), FakeTorchTensor((4, 4096))
        return fast.call(_call.RMSNORM, _call.header("d"), None, (x, weight_type((4096,)), out),
                         1e-6)

    rmsnorm(FakeParameter)
    rmsnorm(FakeParameter)
    assert fast.exchange_api_state() == "on"
    assert fast.exchange_api_state(FakeParameter) == "on"
    assert api.calls == 6  # 3 tensors per call (the first call also checks 2 types once)
    rmsnorm(OwnApiTensor)
    assert fast.exchange_api_state(OwnApiTensor) == "off" and other.calls == 0
    with pytest.raises(flashjit.InvalidArgumentError, match="weight"):
        rmsnorm(lambda shape: FakeParameter((2048,)))  # still validated by the library


def test_a_replaced_api_attribute_is_looked_up_again(engine, monkeypatch):
    first, second = FakeApi(), FakeApi()
    install(monkeypatch, first)
    use_fake_torch(monkeypatch)
    call = lambda: fast.call(_call.RMSNORM, _call.header("d"), None,  # noqa: E731
                             (FakeTorchTensor((4, 4096)), FakeTorchTensor((4096,)),
                              FakeTorchTensor((4, 4096))), 1e-6)
    call()
    assert fast.exchange_api_state() == "on" and first.calls == 3
    monkeypatch.setattr(FakeTorchTensor, "__dlpack_c_exchange_api__", second.capsule)
    call()  # no reset: the extension notices the new attribute itself
    assert first.calls == 3 and second.calls == 3
    monkeypatch.delattr(FakeTorchTensor, "__dlpack_c_exchange_api__")
    call()
    assert first.calls == 3 and second.calls == 3 and fast.exchange_api_state() == "off"
