# Session 13 lead: stage the D 256 Q-in-shared-memory check (binaries of build/, a fresh cache of
# only the kernels the call launches).
set -e
S=build-qs-stage; C=$PWD/build-qs-cache
rm -rf $S $C; mkdir -p $S
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a
CASES='single decode: dtypes and head dims,batch decode: dtypes\, head dims\, knobs,batch decode: production configurations,batch decode: production configurations small,batch decode: persistent grid over ragged batches,single decode: logits far below zero and variant knobs'
FLASHJIT_DRY_RUN=1 build/tests/flashjit_gpu_tests "$CASES" | tail -1
for qs in auto 0; do
  FLASHJIT_DECODE_Q_SMEM=$qs build/tools/bench/flashjit_bench_decode --dry-run --configs gemma2,gemma2w > /dev/null
done
cp -a build/tests/flashjit_gpu_tests build/tools/bench/flashjit_bench_decode build/flashjit build/libflashjit.so* $S/
cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
strip --strip-unneeded $S/flashjit_* $S/libflashjit.so.*.*.* 2>/dev/null || true
du -sh $S
