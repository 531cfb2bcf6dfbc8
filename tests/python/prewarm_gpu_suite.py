"""Compiles, on a machine with no GPU, the kernel variants that test_ops_gpu.py and
python/examples/llama_decode_step.py will use: the same calls on fake tensors with a dry-run
engine for sm_90a. Usage: FLASHJIT_CACHE_DIR=... python3 prewarm_gpu_suite.py"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

import flashjit  # noqa: E402
from fake_tensor import fake  # noqa: E402

flashjit.set_default_engine(flashjit.Engine(dry_run=True, arch="sm_90a"))
I = "int32"  # noqa: E741
for dt in ("bfloat16", "float16"):
    x, w = fake(32, 4096, dtype=dt), fake(4096, dtype=dt)
    flashjit.rmsnorm(x, w, out=x)
    flashjit.gemma_rmsnorm(x, w, out=x)
for B in (32, 16, 4):
    x, w = fake(B, 4096), fake(4096)
    flashjit.rmsnorm(x, w, out=fake(B, 4096))
    flashjit.fused_add_rmsnorm(x, fake(B, 4096), w)
flashjit.rmsnorm(fake(8, 4, 128), fake(128), out=fake(8, 4, 128))
flashjit.rmsnorm(fake(32, 4096, strides=(8192, 1)), fake(4096), out=fake(32, 4096))
flashjit.layernorm(fake(16, 4096), fake(4096, dtype="float32"), fake(4096, dtype="float32"),
                   out=fake(16, 4096))
for B in (32, 16):
    for fn in (flashjit.silu_and_mul, flashjit.gelu_and_mul, flashjit.gelu_tanh_and_mul):
        fn(fake(B, 2 * 14336), out=fake(B, 14336))
for nnz in (32, 16, 10):
    q, k = fake(nnz, 32, 128), fake(nnz, 8, 128)
    pos = fake(nnz, dtype=I)
    flashjit.rope.apply_rope_pos_ids_inplace(q, k, pos)
    flashjit.apply_llama31_rope_pos_ids_inplace(q, k, pos)
    try:
        flashjit._clib.flashjit_apply_rope_pos_ids  # out of place needs torch for outputs
    except AttributeError:
        pass
qf, kf = fake(10, 32, 128), fake(10, 8, 128)
flashjit.apply_rope_inplace(qf, kf, fake(3, dtype=I), fake(2, dtype=I))
flashjit.apply_rope_with_cos_sin_cache_inplace(fake(10, dtype=I), fake(10, 4096), fake(10, 1024),
                                               128, fake(256, 128, dtype="float32"))
for n in (6, 16, 32):
    flashjit.append_paged_kv_cache(fake(n, 8, 128), fake(n, 8, 128), fake(n, dtype=I),
                                   fake(n, dtype=I), (fake(64, 16, 8, 128), fake(64, 16, 8, 128)),
                                   fake(64, dtype=I), fake(5, dtype=I), fake(4, dtype=I))
    flashjit.get_batch_indices_positions(fake(5, dtype=I), fake(4, dtype=I), n,
                                         fake(n, dtype=I), fake(n, dtype=I))
for dt in ("bfloat16", "float16", "float32"):  # test_cascade_merges: one variant per dtype
    flashjit.merge_states(fake(50, 5, 8, 128, dtype=dt), fake(50, 5, 8, dtype="float32"),
                          v_out=fake(50, 8, 128, dtype=dt), s_out=fake(50, 8, dtype="float32"))
V = 128256
for B in (32, 16):
    probs, out = fake(B, V, dtype="float32"), fake(B, dtype=I)
    flashjit.softmax(fake(B, V, dtype="float32"), out=probs)
    flashjit.softmax(fake(B, V, dtype="float32"), temperature=0.5, out=probs)
    flashjit.softmax(fake(B, V, dtype="float32"), temperature=0.7, out=probs)
    flashjit.top_k_top_p_sampling_from_probs(probs, 50, 0.9, seed=7, offset=0, out=out)
    flashjit.top_k_mask_logits(fake(B, V, dtype="float32"), 5, out=fake(B, V, dtype="float32"))
    flashjit.top_p_renorm_probs(probs, 0.5, out=fake(B, V, dtype="float32"))
    flashjit._clib.flashjit_top_k_sampling_from_probs  # per-row k below
    flashjit.top_k_sampling_from_probs(probs, 10, out=out)
flashjit.sampling_from_probs(fake(4, 1000, dtype="float32"), out=fake(4, dtype=I))
q = fake(32, 128)
for L in (1000, 1024):
    flashjit.single_decode_with_kv_cache(q, fake(L, 8, 128), fake(L, 8, 128), out=fake(32, 128))
    flashjit.single_decode_with_kv_cache(q, fake(L, 8, 128), fake(L, 8, 128), out=fake(32, 128),
                                         return_lse=True, lse=fake(32, dtype="float32"))
ws = fake(128 << 20, dtype="uint8")
for graph in (False, True):
    for B in (3, 4, 8, 16, 32):
        if graph:
            idx = fake(4096, dtype=I)  # plan's indices = the buffer: no copy
            w = flashjit.CUDAGraphBatchDecodeWithPagedKVCacheWrapper(
                ws, fake(9, dtype=I), idx, fake(8, dtype=I))
            if B > 8:
                continue
        else:
            w = flashjit.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
        w.plan(list(range(0, 4 * B + 1, 4)), idx if graph else fake(4 * B, dtype=I), [16] * B, 32, 8, 128, 16,
               q_data_type="bfloat16")
        cache = (fake(4096, 16, 8, 128), fake(4096, 16, 8, 128))
        w.run(fake(B if not graph else 8, 32, 128), cache, out=fake(B if not graph else 8, 32, 128))
        w.run(fake(B if not graph else 8, 32, 128), cache, out=fake(B if not graph else 8, 32, 128),
              return_lse=True, lse=fake(B if not graph else 8, 32, dtype="float32"))
        w.run(fake(B, 32, 128), fake(4096, 2, 16, 8, 128), out=fake(B, 32, 128))
print(flashjit.get_default_engine().stats())
