"""The per-call fast path (flashjit._call: one packed block, one call of flashjit_call_packed)
on the CPU: PyTorch-like tensors (fake_torch), DLPack objects (fake_tensor) and None, against
dry-run engines that validate and build but never launch. Every op's Python function is run, so
a wrong tensor order or scalar slot shows up as a C error here.

Every test that calls ops runs twice: through the Python implementation (struct.pack_into and a
ctypes call) and through the C extension _flashjit_fast (when it is built; ctest sets
FLASHJIT_TEST_EXPECT_FAST=1 when it is, and then a missing extension is a failure)."""

import ctypes
import os
import subprocess
import sys
import struct
import threading
import time

import pytest

import flashjit
from fake_tensor import fake
from fake_torch import FakeTorchTensor, t, use_fake_torch
from flashjit import _call

_OP_MODULES = ("activation", "cascade", "decode", "norm", "page", "rope", "sampling")


def _fast_or_skip():
    if _call.fast is None:
        if os.environ.get("FLASHJIT_TEST_EXPECT_FAST") == "1" and sys.version_info >= (3, 11):
            pytest.fail(f"_flashjit_fast was built but not loaded: {_call.fast_error}")
        pytest.skip(f"_flashjit_fast not available ({_call.fast_error or 'not found'})")
    return _call.fast.call


@pytest.fixture(params=["python", "fast"], autouse=True)
def path(request, monkeypatch):
    """Points every op module (and _call.call) at one implementation of the call."""
    fn = _call._call_python if request.param == "python" else _fast_or_skip()
    monkeypatch.setattr(_call, "call", fn)
    for name in _OP_MODULES:
        monkeypatch.setattr(getattr(flashjit, name), "_call_op", fn)
    return request.param


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """One kernel cache for the module: each variant is compiled once (NVRTC, no GPU)."""
    return str(tmp_path_factory.mktemp("packed-cache"))


@pytest.fixture
def engine(cache_dir):
    e = flashjit.Engine(dry_run=True, arch="sm_90a", cache_dir=cache_dir,
                        read_environment=False)
    previous = flashjit.engine._default
    flashjit.set_default_engine(e)
    yield e
    flashjit.set_default_engine(previous)
    e.close()


@pytest.fixture
def streams(monkeypatch):
    seen = []
    use_fake_torch(monkeypatch, seen)
    return seen


def test_layout_matches_the_header():
    c = flashjit._clib
    assert c.flashjit_packed_op_name(_call.RMSNORM) == b"rmsnorm"
    assert c.flashjit_packed_op_name(999) is None
    names = [n for n in dir(_call) if n.isupper() and not n.startswith("_")]
    assert len(names) == 39
    for n in names:  # every op number names the same op on both sides
        assert c.flashjit_packed_op_name(getattr(_call, n)).decode().upper() == n, n
    assert struct.calcsize("<iiQQ" + "d" * 8 + "q" * 8) == _call._HEADER


def test_norm_and_activation(engine, streams):
    x, w, out = t(4, 4096), t(4096), t(4, 4096)
    assert flashjit.rmsnorm(x, w, out=out) is out
    assert flashjit.gemma_rmsnorm(x, w, 1e-5, out=out) is out
    assert flashjit.fused_add_rmsnorm(x, t(4, 4096), w) is None
    flashjit.gemma_fused_add_rmsnorm(x, t(4, 4096), w, eps=1e-5)
    flashjit.layernorm(x, t(4096, dtype="float32"), t(4096, dtype="float32"), out=out)
    flashjit.silu_and_mul(t(8, 2048), out=t(8, 1024))
    flashjit.gelu_and_mul(t(8, 2048), out=t(8, 1024))
    flashjit.gelu_tanh_and_mul(t(8, 2048), out=t(8, 1024))
    assert streams and set(streams) == {0}  # the current stream of the tensors' device


def test_cascade(engine, streams):
    f32 = "float32"
    va, vb, vo = t(4, 8, 128), t(4, 8, 128), t(4, 8, 128)
    sa, sb, so = t(4, 8, dtype=f32), t(4, 8, dtype=f32), t(4, 8, dtype=f32)
    assert flashjit.merge_state(va, sa, vb, sb, v_out=vo, s_out=so) == (vo, so)
    assert flashjit.merge_state_in_place(va, sa, vb, sb) is None
    flashjit.merge_state_in_place(va, sa, vb, sb, mask=t(4, dtype="bool"))
    assert flashjit.merge_states(t(4, 3, 8, 128), t(4, 3, 8, dtype=f32), v_out=vo,
                                 s_out=so) == (vo, so)
    with pytest.raises(flashjit.InvalidArgumentError, match="s_b: dtype bf16"):
        flashjit.merge_state(va, sa, vb, t(4, 8), v_out=vo, s_out=so)
    with pytest.raises(flashjit.InvalidArgumentError, match="v: shares memory with v_other"):
        flashjit.merge_state_in_place(va, sa, va, sb)
    assert streams and set(streams) == {0}


def test_bad_input_raises_the_c_message(engine, streams):
    x, w, out = t(4, 4096), t(4096), t(4, 4096)
    with pytest.raises(flashjit.InvalidArgumentError) as e:
        flashjit.rmsnorm(t(4, 4096, dtype="int32"), w, out=out)
    assert "flashjit_rmsnorm: InvalidArgument: input" in str(e.value)
    with pytest.raises(flashjit.InvalidArgumentError, match="dtype"):
        flashjit.rmsnorm(t(4, 4096, dtype="complex64"), w, out=out)  # unknown to flashjit
    with pytest.raises(flashjit.InvalidArgumentError, match="input.*CUDA"):
        flashjit.rmsnorm(t(4, 4096, device=-1), w, out=out)  # a CPU tensor
    with pytest.raises(flashjit.InvalidArgumentError, match="input"):
        flashjit.rmsnorm(t(4, 4096, strides=(8192, 2)), w, out=out)
    with pytest.raises(flashjit.InvalidArgumentError, match="out"):
        flashjit.rmsnorm(x, w, out=t(4, 4096, device=1))  # another device
    with pytest.raises(flashjit.InvalidArgumentError, match="eps"):
        flashjit.rmsnorm(x, w, eps=-1.0, out=out)
    with pytest.raises(ValueError, match="7 dims"):
        flashjit.rmsnorm(t(1, 1, 1, 1, 1, 4, 4096), w, out=out)
    with pytest.raises(TypeError, match="__dlpack__"):
        flashjit.rmsnorm(x, object(), out=out)
    with pytest.raises(flashjit.InvalidArgumentError, match="weight: DLTensor pointer is NULL"):
        flashjit.fused_add_rmsnorm(x, t(4, 4096), None)
    # A good call after the errors still works (no state left behind).
    flashjit.rmsnorm(x, w, out=out)


def test_stream_follows_the_first_cuda_tensor(engine, streams):
    flashjit.silu_and_mul(t(8, 2048, device=1), out=t(8, 1024, device=1))
    assert streams[-1] == 1
    # No CUDA tensor at all: no stream query (the C side refuses the CPU tensors).
    n = len(streams)
    with pytest.raises(flashjit.InvalidArgumentError):
        flashjit.silu_and_mul(t(8, 2048, device=-1), out=t(8, 1024, device=-1))
    assert len(streams) == n


def test_dlpack_objects_and_mixtures(engine, streams):
    flashjit.rmsnorm(fake(4, 4096), t(4096), out=fake(4, 4096))
    with pytest.raises(flashjit.InvalidArgumentError, match="weight"):
        flashjit.rmsnorm(fake(4, 4096), fake(4096, dtype="float32"), out=t(4, 4096))


def test_rope_and_page(engine, streams):
    q, k, pos = t(4, 32, 128), t(4, 8, 128), t(4, dtype="int32")
    flashjit.apply_rope_pos_ids_inplace(q, k, pos)
    flashjit.apply_llama31_rope_pos_ids_inplace(q, k, pos, rope_theta=5e5)
    indptr, offsets = t(2, dtype="int32"), t(1, dtype="int32")
    flashjit.apply_rope_inplace(q, k, indptr, offsets, rope_scale=2.0)
    flashjit.apply_llama31_rope_inplace(q, k, indptr, offsets)
    with pytest.raises(flashjit.InvalidArgumentError, match="rotary_dim"):
        flashjit.apply_llama31_rope_pos_ids_inplace(q, k, pos, rotary_dim=7)
    flashjit.apply_rope_with_cos_sin_cache_inplace(
        pos, t(4, 32 * 128), t(4, 8 * 128), 128, t(4096, 128, dtype="float32"))
    with pytest.raises(flashjit.InvalidArgumentError, match="head_size"):
        flashjit.apply_rope_with_cos_sin_cache_inplace(
            pos, t(4, 32 * 128), t(4, 8 * 128), 100, t(4096, 128, dtype="float32"))
    args = (t(4, 8, 128), t(4, 8, 128), t(4, dtype="int32"), t(4, dtype="int32"))
    tail = (t(16, dtype="int32"), t(5, dtype="int32"), t(4, dtype="int32"))
    flashjit.append_paged_kv_cache(*args, (t(16, 16, 8, 128), t(16, 16, 8, 128)), *tail)
    flashjit.append_paged_kv_cache(*args, t(16, 2, 8, 16, 128), *tail, kv_layout="HND")
    with pytest.raises(flashjit.InvalidArgumentError, match="k_cache|v_cache"):
        flashjit.append_paged_kv_cache(*args, (t(16, 16, 8, 128), t(16, 16, 8, 64)), *tail)
    bi, ps = flashjit.get_batch_indices_positions(
        t(5, dtype="int32"), t(4, dtype="int32"), 4, t(4, dtype="int32"), t(4, dtype="int32"))
    assert bi.shape == (4,) and ps.shape == (4,)


def test_sampling(engine, streams):
    probs, logits, out = t(4, 32000, dtype="float32"), t(4, 32000, dtype="float32"), \
        t(4, dtype="int32")
    assert flashjit.sampling_from_probs(probs, out=out, seed=1, offset=2) is out
    flashjit.sampling_from_logits(logits, out=out)
    flashjit.top_k_sampling_from_probs(probs, 50, out=out)
    flashjit.top_p_sampling_from_probs(probs, 0.9, out=out, seed=(1 << 64) - 1, offset=7)
    flashjit.min_p_sampling_from_probs(probs, 0.1, out=out)
    flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9, out=out, filter_apply_order="joint")
    flashjit.top_k_top_p_sampling_from_logits(logits, 50, 0.9, out=out)
    flashjit.sampling_from_probs(probs, indices=t(3, dtype="int32"), out=t(3, dtype="int32"))
    flashjit.top_p_renorm_probs(probs, 0.9, out=t(4, 32000, dtype="float32"))
    flashjit.top_k_renorm_probs(probs, 10, out=t(4, 32000, dtype="float32"))
    flashjit.top_k_mask_logits(logits, 10, out=t(4, 32000, dtype="float32"))
    flashjit.softmax(logits, 0.7, out=t(4, 32000, dtype="float32"))
    flashjit.chain_speculative_sampling(
        t(2, 3, 1000, dtype="float32"), t(2, 3, dtype="int32"), t(2, 4, 1000, dtype="float32"),
        out=t(2, 4, dtype="int32"), seed=3, offset=4)
    with pytest.raises(flashjit.InvalidArgumentError, match="top_p"):
        flashjit.top_p_sampling_from_probs(probs, 1.5, out=out)
    with pytest.raises(flashjit.InvalidArgumentError, match="top_k"):
        flashjit.top_k_sampling_from_probs(probs, 0, out=out)
    with pytest.raises(flashjit.InvalidArgumentError, match="samples"):
        flashjit.top_k_sampling_from_probs(probs, 5, out=t(4, dtype="float32"))


def test_decode(engine, streams):
    q, k, v = t(32, 128), t(100, 8, 128), t(100, 8, 128)
    flashjit.single_decode_with_kv_cache(q, k, v, out=t(32, 128))
    flashjit.single_decode_with_kv_cache(q, k, v, out=t(32, 128), return_lse=True,
                                         lse=t(32, dtype="float32"))
    with pytest.raises(flashjit.InvalidArgumentError, match="lse"):
        flashjit.single_decode_with_kv_cache(q, k, v, out=t(32, 128), return_lse=True,
                                             lse=t(31, dtype="float32"))
    w = flashjit.BatchDecodeWithPagedKVCacheWrapper(t(1 << 27, dtype="uint8"), "NHD")
    w.plan([0, 5, 9, 16], t(16, dtype="int32"), [16, 1, 7], 32, 8, 128, 16,
           q_data_type="bfloat16")
    cache = (t(16, 16, 8, 128), t(16, 16, 8, 128))
    w.run(t(3, 32, 128), cache, out=t(3, 32, 128))
    w.run(t(3, 32, 128), t(16, 2, 16, 8, 128), out=t(3, 32, 128), return_lse=True,
          lse=t(3, 32, dtype="float32"))
    with pytest.raises(flashjit.InvalidArgumentError):
        w.run(t(3, 32, 128), cache, out=t(3, 32, 64))


def test_packed_block_checks(engine):
    """The C entry point checks the block itself (what a hand-written FFI caller gets)."""
    buf = ctypes.create_string_buffer(_call._BYTES)
    hdr = _call.header("d")

    def run(op, n, eps=1e-6):
        hdr.pack_into(buf, 0, op, n, engine.handle, 0, eps)
        return flashjit._clib.flashjit_call_packed(ctypes.addressof(buf))

    assert run(999, 0) == flashjit.errors.INVALID_ARGUMENT
    assert b"op = 999" in flashjit._clib.flashjit_last_error()
    assert run(_call.RMSNORM, 2) == flashjit.errors.INVALID_ARGUMENT
    assert b"rmsnorm: num_tensors = 2, the op takes 3" in flashjit._clib.flashjit_last_error()
    for j in range(3):
        struct.pack_into("<Qiii", buf, _call._HEADER + j * _call._TENSOR, 0, 0, 0, 9)
    assert run(_call.RMSNORM, 3) == flashjit.errors.INVALID_ARGUMENT
    assert b"tensor 0 (input): ndim = 9" in flashjit._clib.flashjit_last_error()
    assert flashjit._clib.flashjit_call_packed(None) == flashjit.errors.INVALID_ARGUMENT


def test_closed_default_engine(tmp_path, streams):
    e = flashjit.Engine(dry_run=True, arch="sm_90a", disable_cache=True, read_environment=False)
    previous = flashjit.engine._default
    flashjit.set_default_engine(e)
    try:
        e.close()
        with pytest.raises(flashjit.InvalidHandleError, match="closed"):
            flashjit.rmsnorm(t(4, 4096), t(4096), out=t(4, 4096))
    finally:
        flashjit.set_default_engine(previous)


def test_threads_do_not_share_the_argument_block(engine, streams, monkeypatch):
    """ctypes releases the GIL during the call: a block shared between threads would let one
    thread's tensors reach another thread's call. Good and bad calls from several threads at
    once must each get their own result. The ctypes call is wrapped so that it lets the other
    threads run between packing and reading (as a call that takes a while would); on both
    paths stride() lets them run in the middle of packing."""
    errors = []
    real = _call._fn

    def slow_call(addr):
        time.sleep(0.0002)  # releases the GIL: other threads pack their calls now
        return real(addr)

    monkeypatch.setattr(_call, "_fn", slow_call)

    class SlowStride(FakeTorchTensor):
        """stride() lets other threads run in the middle of packing (both paths call it)."""
        __slots__ = ()

        def stride(self):
            time.sleep(0)
            return self._strides

    def s(*shape):
        return SlowStride(shape, "bfloat16")

    def worker(seed):
        good = (s(4, 4096), t(4096), s(4, 4096))
        bad = (s(4, 4096), s(2048), t(4, 4096))  # weight of the wrong size
        for i in range(200):
            if (i + seed) % 2:
                try:
                    flashjit.rmsnorm(*bad[:2], out=bad[2])
                    errors.append(f"thread {seed}: a bad call passed")
                except flashjit.InvalidArgumentError as e:
                    if "weight" not in str(e):
                        errors.append(f"thread {seed}: wrong message {e}")
            else:
                try:
                    flashjit.rmsnorm(*good[:2], out=good[2])
                except flashjit.FlashJITError as e:
                    errors.append(f"thread {seed}: a good call failed: {e}")

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def _outcome(thunk):
    try:
        r = thunk()
    except Exception as e:  # noqa: BLE001: the exception itself is the result compared
        return (type(e).__name__, str(e))
    if isinstance(r, tuple):
        return ("ok", tuple(type(x).__name__ for x in r))
    return ("ok", type(r).__name__)


def _every_op_calls():
    """Good and bad calls of every op (fresh tensors per call)."""
    x, w = (lambda: t(4, 4096)), (lambda: t(4096))
    probs = lambda: t(4, 32000, dtype="float32")  # noqa: E731
    cache = lambda: (t(16, 16, 8, 128), t(16, 16, 8, 128))  # noqa: E731
    append = lambda: (t(4, 8, 128), t(4, 8, 128), t(4, dtype="int32"), t(4, dtype="int32"))  # noqa: E731
    tail = lambda: (t(16, dtype="int32"), t(5, dtype="int32"), t(4, dtype="int32"))  # noqa: E731
    q, k, pos = (lambda: t(4, 32, 128)), (lambda: t(4, 8, 128)), (lambda: t(4, dtype="int32"))
    return [
        lambda: flashjit.rmsnorm(x(), w(), out=x()),
        lambda: flashjit.rmsnorm(x(), t(2048), out=x()),
        lambda: flashjit.rmsnorm(x(), w(), eps=-1.0, out=x()),
        lambda: flashjit.rmsnorm(x(), w(), eps=1, out=x()),  # an int for a double slot
        lambda: flashjit.rmsnorm(x(), w(), eps="a", out=x()),  # struct.error on both paths
        lambda: flashjit.rmsnorm(t(4, 4096, dtype="int32"), w(), out=x()),
        lambda: flashjit.rmsnorm(t(4, 4096, dtype="complex64"), w(), out=x()),
        lambda: flashjit.rmsnorm(t(1, 1, 1, 1, 1, 4, 4096), w(), out=x()),
        lambda: flashjit.rmsnorm(t(4, 4096, device=-1), w(), out=x()),
        lambda: flashjit.rmsnorm(fake(4, 4096), w(), out=x()),
        lambda: flashjit.rmsnorm(x(), object(), out=x()),
        lambda: flashjit.gemma_rmsnorm(x(), w(), out=x()),
        lambda: flashjit.fused_add_rmsnorm(x(), x(), w()),
        lambda: flashjit.fused_add_rmsnorm(x(), x(), None),
        lambda: flashjit.gemma_fused_add_rmsnorm(x(), t(4, 2048), w()),
        lambda: flashjit.layernorm(x(), t(4096, dtype="float32"), t(4096, dtype="float32"),
                                   out=x()),
        lambda: flashjit.silu_and_mul(t(8, 2048), out=t(8, 1024)),
        lambda: flashjit.gelu_and_mul(t(8, 2048), out=t(8, 1000)),
        lambda: flashjit.gelu_tanh_and_mul(t(8, 2048), out=t(8, 1024)),
        lambda: flashjit.apply_rope_pos_ids_inplace(q(), k(), pos()),
        lambda: flashjit.apply_rope_pos_ids_inplace(q(), k(), t(4, dtype="float32")),
        lambda: flashjit.apply_rope_pos_ids(q(), k(), pos()),
        lambda: flashjit.apply_llama31_rope_pos_ids_inplace(q(), k(), pos(), rotary_dim=7),
        lambda: flashjit.apply_rope_inplace(q(), k(), t(2, dtype="int32"), t(1, dtype="int32")),
        lambda: flashjit.apply_llama31_rope_inplace(q(), k(), t(2, dtype="int32"),
                                                    t(1, dtype="int32")),
        lambda: flashjit.apply_rope_with_cos_sin_cache_inplace(
            pos(), t(4, 32 * 128), t(4, 8 * 128), 128, t(4096, 128, dtype="float32")),
        lambda: flashjit.apply_rope_with_cos_sin_cache_inplace(
            pos(), t(4, 32 * 128), t(4, 8 * 128), 100, t(4096, 128, dtype="float32")),
        lambda: flashjit.append_paged_kv_cache(*append(), cache(), *tail()),
        lambda: flashjit.append_paged_kv_cache(*append(), t(16, 2, 8, 16, 128), *tail(),
                                               kv_layout="HND"),
        lambda: flashjit.append_paged_kv_cache(*append(), (t(16, 16, 8, 128),
                                                           t(16, 16, 8, 64)), *tail()),
        lambda: flashjit.get_batch_indices_positions(
            t(5, dtype="int32"), t(4, dtype="int32"), 4, t(4, dtype="int32"),
            t(4, dtype="int32")),
        lambda: flashjit.sampling_from_probs(probs(), out=t(4, dtype="int32"), seed=1, offset=2),
        lambda: flashjit.sampling_from_logits(probs(), out=t(4, dtype="int32")),
        lambda: flashjit.top_k_sampling_from_probs(probs(), 0, out=t(4, dtype="int32")),
        lambda: flashjit.top_p_sampling_from_probs(probs(), 1.5, out=t(4, dtype="int32")),
        lambda: flashjit.top_p_sampling_from_probs(probs(), 0.9, out=t(4, dtype="int32"),
                                                   seed=(1 << 64) - 1, offset=7),
        lambda: flashjit.min_p_sampling_from_probs(probs(), 0.1, out=t(4, dtype="int32")),
        lambda: flashjit.top_k_top_p_sampling_from_probs(probs(), 50, 0.9,
                                                         out=t(4, dtype="int32")),
        lambda: flashjit.top_k_top_p_sampling_from_logits(probs(), 50, 0.9,
                                                          out=t(4, dtype="float32")),
        lambda: flashjit.sampling_from_probs(probs(), indices=t(3, dtype="int32"),
                                             out=t(3, dtype="int32")),
        lambda: flashjit.top_k_renorm_probs(probs(), 10, out=t(4, 32000, dtype="float32")),
        lambda: flashjit.top_p_renorm_probs(probs(), 0.9, out=t(4, 32000, dtype="float32")),
        lambda: flashjit.top_k_mask_logits(probs(), 10, out=t(4, 32000, dtype="float32")),
        lambda: flashjit.softmax(probs(), 0.7, out=t(4, 32000, dtype="float32")),
        lambda: flashjit.softmax(probs(), 0.7, out=t(4, 32000)),
        lambda: flashjit.chain_speculative_sampling(
            t(2, 3, 1000, dtype="float32"), t(2, 3, dtype="int32"),
            t(2, 4, 1000, dtype="float32"), out=t(2, 4, dtype="int32"), seed=3, offset=4),
        lambda: flashjit.single_decode_with_kv_cache(t(32, 128), t(100, 8, 128),
                                                     t(100, 8, 128), out=t(32, 128)),
        lambda: flashjit.single_decode_with_kv_cache(
            t(32, 128), t(100, 8, 128), t(100, 8, 128), out=t(32, 128), return_lse=True,
            lse=t(31, dtype="float32")),
    ]


def _run_all(fn, calls):
    previous = [getattr(flashjit, m)._call_op for m in _OP_MODULES]
    try:
        for m in _OP_MODULES:
            getattr(flashjit, m)._call_op = fn
        return [_outcome(c) for c in calls]
    finally:
        for m, p in zip(_OP_MODULES, previous):
            getattr(flashjit, m)._call_op = p


def test_both_paths_agree_on_every_op(engine, monkeypatch):
    """The same results, exception types and messages, and stream queries, call by call."""
    fast = _fast_or_skip()
    calls = _every_op_calls()
    streams_py, streams_fast = [], []
    use_fake_torch(monkeypatch, streams_py)
    by_python = _run_all(_call._call_python, calls)
    use_fake_torch(monkeypatch, streams_fast)
    by_fast = _run_all(fast, calls)
    for i, (a, b) in enumerate(zip(by_python, by_fast)):
        assert a == b, f"call {i}: {a} vs {b}"
    assert streams_py == streams_fast
    kinds = {o[0] for o in by_python}
    assert {"ok", "InvalidArgumentError", "ValueError", "TypeError", "error"} <= kinds, kinds
    with pytest.raises(struct.error):  # what the scalar of the wrong type raises, both paths
        fast(_call.RMSNORM, _call.header("d"), None, (t(4, 4096), t(4096), t(4, 4096)), "a")


def test_the_extension_makes_the_common_calls_itself(engine, streams, monkeypatch, path):
    """PyTorch tensors and None go through C; DLPack objects, new tensor types and new dtypes
    go through the Python implementation (which makes its call through ctypes: counted). On
    the Python path every call is counted."""
    python_calls = []
    real = _call._fn

    def counted(block):
        python_calls.append(1)
        return real(block)

    monkeypatch.setattr(_call, "_fn", counted)
    flashjit.rmsnorm(t(4, 4096), t(4096), out=t(4, 4096))
    flashjit.single_decode_with_kv_cache(t(32, 128), t(100, 8, 128), t(100, 8, 128),
                                         out=t(32, 128))  # lse: None
    flashjit.top_k_sampling_from_probs(t(4, 32000, dtype="float32"), 5,
                                       out=t(4, dtype="int32"))  # indices and more: None
    if path == "python":
        assert len(python_calls) == 3
        flashjit.rmsnorm(fake(4, 4096), t(4096), out=t(4, 4096))
        assert len(python_calls) == 4
        return
    assert python_calls == []
    flashjit.rmsnorm(fake(4, 4096), t(4096), out=t(4, 4096))  # a DLPack object
    assert len(python_calls) == 1

    class Param(FakeTorchTensor):  # like nn.Parameter: a subclass seen for the first time
        __slots__ = ()

    flashjit.rmsnorm(t(4, 4096), Param((4096,)), out=t(4, 4096))
    assert len(python_calls) == 2 and Param in _call._tensor_types
    flashjit.rmsnorm(t(4, 4096), Param((4096,)), out=t(4, 4096))  # now known: C
    assert len(python_calls) == 2


def test_no_references_leak(engine, streams, path):
    """1000 good, failing and handed-over calls leave every argument's refcount as it was."""
    fn = _call.call
    hdr = _call.header("d")
    x, w, out = t(4, 4096), t(4096), t(4, 4096)
    bad_w = t(2048)
    opt = t(3, dtype="int32")
    eps = 1e-6 + 0.0
    objs = [x, w, out, bad_w, x.shape, x._strides, x._data, w.shape, w._data, out._strides,
            hdr, eps, _call._DTYPES["bfloat16"], opt, opt.shape]

    def loop():
        for _ in range(1000):
            fn(_call.RMSNORM, hdr, None, (x, w, out), eps)
            try:
                fn(_call.RMSNORM, hdr, None, (x, bad_w, out), eps)
            except flashjit.InvalidArgumentError:
                pass
            try:
                fn(_call.RMSNORM, hdr, None, (x, w, out))  # a scalar short: struct.error
            except struct.error:
                pass
            flashjit.sampling_from_probs(t(4, 32000, dtype="float32"), out=t(4, dtype="int32"))
            flashjit.sampling_from_probs(t(4, 32000, dtype="float32"), indices=opt, out=opt)

    loop()  # warm: kernels built, caches filled
    before = [sys.getrefcount(o) for o in objs]
    loop()
    after = [sys.getrefcount(o) for o in objs]
    assert after == before


def test_fast_path_switch():
    """FLASHJIT_PYTHON_FAST=0 keeps the ctypes path; otherwise the extension beside the
    library is used (when built)."""
    python_dir = os.path.dirname(os.path.dirname(os.path.abspath(_call.__file__)))
    code = ("from flashjit import _call; "
            "print(_call.fast_path, _call.call is _call._call_python)")

    def run(**env):
        e = dict(os.environ, PYTHONPATH=python_dir, **env)
        r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                           check=True)
        return r.stdout.split()

    assert run(FLASHJIT_PYTHON_FAST="0") == ["None", "True"]
    if _call.fast is not None:  # (whether it must be: _fast_or_skip, in the other tests)
        path, is_python = run(FLASHJIT_PYTHON_FAST="1")
        assert is_python == "False"
        assert os.path.dirname(path) == os.path.dirname(os.path.abspath(_call._lib.library_path))


def test_single_decode_workspace_per_thread_and_stream(engine, monkeypatch):
    """Two threads (or one thread on two streams) never share a single-decode workspace; one
    thread on one stream reuses its own."""
    from flashjit import decode

    current = threading.local()

    def raw_stream(index):
        return getattr(current, "stream", 0)

    class FakeTorch:
        uint8 = "uint8"

        @staticmethod
        def empty(n, dtype, device):
            return t(n, dtype=dtype)

    use_fake_torch(monkeypatch)
    monkeypatch.setattr(_call, "_raw_stream", raw_stream)
    monkeypatch.setattr(decode, "torch_module", lambda: FakeTorch)
    got, errors = {}, []

    def worker(name, stream):
        current.stream = stream
        try:
            q = t(32, 128)
            first = decode._single_decode_workspace(q, 32, 128)
            assert first == decode._single_decode_workspace(t(32, 128), 32, 128)
            flashjit.single_decode_with_kv_cache(q, t(100, 8, 128), t(100, 8, 128),
                                                 out=t(32, 128))
            current.stream = stream + 1000  # the same thread on another stream
            got[name] = (first, decode._single_decode_workspace(q, 32, 128))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n, s))
               for n, s in (("a", 7), ("b", 7), ("c", 8))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    addrs = [a for pair in got.values() for (a, _) in pair]
    assert len(addrs) == 6 and len(set(addrs)) == 6, got
    assert all(n > 0 for pair in got.values() for (_, n) in pair)
    assert decode._single_decode_workspace(t(32, 128, device=-1), 32, 128) == (None, 0)
