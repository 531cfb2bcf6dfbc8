# Session 14 lead: stage the D 256 split form's check (binaries of build/, a fresh cache of only the
# kernels the call launches): every [decode] GPU case, and the Gemma-2 benches in three forms.
set -e
S=build-ds-stage; C=$PWD/build-ds-cache
rm -rf $S $C; mkdir -p $S build-pack
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a
FLASHJIT_DRY_RUN=1 build/tests/flashjit_gpu_tests "[decode]" | tail -1
FLASHJIT_DRY_RUN=1 FLASHJIT_DECODE_PERSISTENT=1 build/tests/flashjit_gpu_tests "*persistent*" | tail -1
for env in "" "FLASHJIT_DECODE_STAGES=3" "FLASHJIT_DECODE_D_SPLIT=0"; do
  env $env build/tools/bench/flashjit_bench_decode --dry-run --configs gemma2,gemma2w > /dev/null
done
build/tools/bench/flashjit_bench_decode --dry-run > /dev/null
cp -a build/tests/flashjit_gpu_tests build/tools/bench/flashjit_bench_decode build/flashjit build/libflashjit.so* $S/
cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
strip --strip-unneeded $S/flashjit_* $S/libflashjit.so.*.*.* 2>/dev/null || true
du -sh $S
tar czf build-pack/build-ds-stage.tar.gz $S && du -sh build-pack/build-ds-stage.tar.gz
