"""The per-call fast path (flashjit._call: one packed block, one ctypes call) on the CPU:
PyTorch-like tensors (fake_torch), DLPack objects (fake_tensor) and None, against dry-run
engines that validate and build but never launch. Every op's Python function is run, so a
wrong tensor order or scalar slot shows up as a C error here."""

import ctypes
import struct
import threading
import time

import pytest

import flashjit
from fake_tensor import fake
from fake_torch import t, use_fake_torch
from flashjit import _call


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
    assert len(names) == 36
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
    once must each get their own result. The C call is wrapped so that it lets the other
    threads run between packing and reading (as a call that takes a while would)."""
    errors = []
    real = _call._fn

    def slow_call(addr):
        time.sleep(0.0002)  # releases the GIL: other threads pack their calls now
        return real(addr)

    monkeypatch.setattr(_call, "_fn", slow_call)

    def worker(seed):
        good = (t(4, 4096), t(4096), t(4, 4096))
        bad = (t(4, 4096), t(2048), t(4, 4096))  # weight of the wrong size
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
