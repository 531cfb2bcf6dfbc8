# Session 14 lead, lazy rescale A/B: stage one tree's decode bench with a fresh cache of its kernels.
# Usage: stage.sh BUILD STAGE (run from the repository root).
set -e
B=$1; S=$2; C=$PWD/$S-cache
rm -rf $S $C; mkdir -p $S build-pack
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a
$B/tools/bench/flashjit_bench_decode --dry-run > /dev/null
$B/tools/bench/flashjit_bench_decode --dry-run --configs base,d64,gemma2,mha,tp8,qwen7b > /dev/null
cp -a $B/tools/bench/flashjit_bench_decode $B/libflashjit.so* $S/
[ -x $B/tests/flashjit_gpu_tests ] && cp -a $B/tests/flashjit_gpu_tests $S/
cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
strip --strip-unneeded $S/flashjit_* $S/libflashjit.so.*.*.* 2>/dev/null || true
du -sh $S
