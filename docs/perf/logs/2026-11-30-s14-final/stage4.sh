# Session 14, D 64 plan fix check: the tree's build with a fresh cache of the d64 bench and the D 64
# decode cases (seed 1).
set -e
S=build-d64b-stage; C=$PWD/$S-cache; B=build/tools/bench/flashjit_bench_decode
rm -rf $S $C; mkdir -p $S build-pack
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a FLASHJIT_TEST_SEED=1
$B --dry-run --plan --configs d64 > /dev/null
while read -r c; do FLASHJIT_DRY_RUN=1 build/tests/flashjit_gpu_tests "$c" | tail -1; done < docs/perf/logs/2026-11-30-s14-final/cases4.txt
cp -a $B build/tests/flashjit_gpu_tests build/libflashjit.so* $S/
cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
strip --strip-unneeded $S/flashjit_* $S/libflashjit.so.*.*.* 2>/dev/null || true
rm -f build-pack/*.tar.gz && tar czf build-pack/d64b.tar.gz $S && du -sh build-pack/d64b.tar.gz
