"""Pure-Python checks: the library loads, the engine and cache calls work, and errors map to
exceptions. Runs without PyTorch or a GPU (dry-run engines, fake DLPack tensors)."""

import ctypes
import json
import os

import pytest

import flashjit
from fake_tensor import fake


@pytest.fixture
def engine(tmp_path):
    e = flashjit.Engine(dry_run=True, arch="sm_90a", cache_dir=str(tmp_path / "cache"),
                        read_environment=False)
    previous = flashjit.engine._default
    flashjit.set_default_engine(e)
    yield e
    flashjit.set_default_engine(previous)
    e.close()


def test_library_loads():
    assert flashjit.__version__
    assert os.path.exists(flashjit.library_path)
    assert flashjit._clib.flashjit_abi_version() == 1


def test_status_names():
    c = flashjit._clib
    assert c.flashjit_status_name(0) == b"OK"
    assert c.flashjit_status_name(1) == b"InvalidArgument"
    assert c.flashjit_status_name(11) == b"InvalidHandle"


def test_engine_config_and_cache(engine, tmp_path):
    cfg = engine.show_config()
    assert cfg["arch"] == "sm_90a" and cfg["dry_run"] is True
    assert "rmsnorm" in cfg["ops"]
    info = engine.build({"op": "rmsnorm", "dtype": "bf16"})
    assert info["key"] and info["arch"] == "sm_90a"
    assert "__global__" in engine.render('{"op": "rmsnorm", "dtype": "bf16"}')
    assert len(engine.cache_ls()) == 1
    report = engine.cache_verify()
    assert report["rows"] == 1 and report["bad_rows"] == 0
    assert engine.cache_gc(1 << 40) == 0
    assert engine.cache_prune() == 0  # the one kernel is this library's
    bundle = str(tmp_path / "k.fjbundle")
    manifest = engine.bundle_export("sm_90a", bundle)
    assert manifest["count"] == 1
    inspected = flashjit.bundle_inspect(bundle)
    assert inspected["ok"] is True and inspected["count"] == 1
    engine.cache_clear()
    assert engine.cache_ls() == []
    assert engine.bundle_import(bundle) == 1
    assert engine.stats()["compiles"] >= 1
    assert any(op["op"] == "rmsnorm" for op in flashjit.spec_ops())


def test_errors_map_to_exceptions(engine):
    with pytest.raises(flashjit.InvalidArgumentError, match="unknown op"):
        engine.build({"op": "nope"})
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError too
        engine.render("{not json")
    with pytest.raises(flashjit.errors.FlashJITError):
        flashjit.bundle_inspect("/nonexistent/bundle")
    with pytest.raises(flashjit.InvalidArgumentError, match="arch"):
        flashjit.Engine(dry_run=True, read_environment=False, disable_cache=True)


def test_closed_engine_is_an_error_not_a_crash(tmp_path):
    e = flashjit.Engine(dry_run=True, arch="sm_90a", disable_cache=True, read_environment=False)
    raw = e.handle
    e.close()
    with pytest.raises(flashjit.InvalidHandleError):
        e.show_config()
    # The C ABI itself refuses the stale handle.
    rc = flashjit._clib.flashjit_cache_clear(raw)
    assert rc == flashjit.errors.INVALID_HANDLE
    assert b"not live" in flashjit._clib.flashjit_last_error()
    assert flashjit._clib.flashjit_cache_clear(None) == flashjit.errors.INVALID_HANDLE


def test_norm_validation_dry_run(engine):
    x, w, out = fake(4, 4096), fake(4096), fake(4, 4096)
    assert flashjit.rmsnorm(x, w, out=out) is out
    flashjit.fused_add_rmsnorm(x, fake(4, 4096), w)
    with pytest.raises(flashjit.InvalidArgumentError, match="input"):
        flashjit.rmsnorm(fake(4, 4096, dtype="int32"), w, out=out)
    with pytest.raises(flashjit.InvalidArgumentError, match="CUDA"):
        flashjit.rmsnorm(fake(4, 4096, device_type=1), w, out=out)
    with pytest.raises(flashjit.InvalidArgumentError, match="input"):
        flashjit.rmsnorm(fake(4, 4096, strides=(8192, 2)), w, out=out)
    with pytest.raises(flashjit.InvalidArgumentError, match="eps"):
        flashjit.rmsnorm(x, w, eps=-1.0, out=out)
    with pytest.raises(TypeError, match="PyTorch|torch"):
        if flashjit._tensor.torch_module() is None:
            flashjit.rmsnorm(x, w)  # no out= and no torch to allocate it
        else:
            raise TypeError("torch present: allocation path is covered by the GPU tests")
    with pytest.raises(TypeError, match="__dlpack__"):
        flashjit.rmsnorm(object(), w, out=out)


def test_layer_ops_dry_run(engine):
    flashjit.silu_and_mul(fake(8, 2048), out=fake(8, 1024))
    flashjit.gelu_tanh_and_mul(fake(8, 2048), out=fake(8, 1024))
    with pytest.raises(flashjit.InvalidArgumentError, match="out"):
        flashjit.silu_and_mul(fake(8, 2048), out=fake(8, 1000))
    q, k = fake(4, 32, 128), fake(4, 8, 128)
    flashjit.apply_rope_pos_ids_inplace(q, k, fake(4, dtype="int32"))
    flashjit.apply_llama31_rope_pos_ids_inplace(q, k, fake(4, dtype="int32"))
    with pytest.raises(flashjit.InvalidArgumentError, match="rotary_dim"):
        flashjit.apply_rope_pos_ids_inplace(q, k, fake(4, dtype="int32"), rotary_dim=7)
    flashjit.append_paged_kv_cache(
        fake(4, 8, 128), fake(4, 8, 128), fake(4, dtype="int32"), fake(4, dtype="int32"),
        (fake(16, 16, 8, 128), fake(16, 16, 8, 128)), fake(16, dtype="int32"),
        fake(5, dtype="int32"), fake(4, dtype="int32"))
    with pytest.raises(ValueError, match="kv_layout"):
        flashjit.append_paged_kv_cache(
            fake(4, 8, 128), fake(4, 8, 128), fake(4, dtype="int32"), fake(4, dtype="int32"),
            fake(16, 2, 16, 8, 128), fake(16, dtype="int32"), fake(5, dtype="int32"),
            fake(4, dtype="int32"), kv_layout="XYZ")


def test_sampling_dry_run(engine):
    probs, out = fake(4, 32000, dtype="float32"), fake(4, dtype="int32")
    assert flashjit.top_p_sampling_from_probs(probs, 0.9, out=out) is out
    flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9, out=out, seed=1, offset=2)
    with pytest.raises(flashjit.InvalidArgumentError, match="top_p"):
        flashjit.top_p_sampling_from_probs(probs, 1.5, out=out)
    with pytest.raises(ValueError, match="filter_apply_order"):
        flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9, out=out,
                                                 filter_apply_order="sideways")


def test_decode_dry_run(engine):
    q, k, v = fake(32, 128), fake(100, 8, 128), fake(100, 8, 128)
    flashjit.single_decode_with_kv_cache(q, k, v, out=fake(32, 128))
    with pytest.raises(flashjit.InvalidArgumentError):
        flashjit.single_decode_with_kv_cache(q, fake(100, 8, 128, dtype="float32"), v,
                                             out=fake(32, 128))
    ws = fake(1 << 27, dtype="uint8")
    w = flashjit.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
    w.plan([0, 5, 9, 16], fake(16, dtype="int32"), [16, 1, 7], 32, 8, 128, 16,
           q_data_type="bfloat16")
    cache = (fake(16, 16, 8, 128), fake(16, 16, 8, 128))
    w.run(fake(3, 32, 128), cache, out=fake(3, 32, 128))
    w.run(fake(3, 32, 128), fake(16, 2, 16, 8, 128), out=fake(3, 32, 128))
    with pytest.raises(flashjit.InvalidArgumentError):
        w.run(fake(3, 32, 128), cache, out=fake(3, 32, 64))
    with pytest.raises(flashjit.InvalidArgumentError, match="q_data_type"):
        w.plan([0, 1], fake(1, dtype="int32"), [1], 32, 8, 128, 16, q_data_type="int8")
