#!/bin/bash
# Stages build-deccfg for call 3 (the final tree: D 256 back to 2 stages): the production
# configuration cases and the head-dim case (dry run), bench_decode's gemma2 / tp8 rows and the
# default grid, twice (the cache's count must stay).
set -e
B=build-deccfg; S=build-deccfg-stage
cmake --build $B -j2 --target flashjit_gpu_tests flashjit flashjit_bench_decode | tail -1
export FLASHJIT_CACHE_DIR=$PWD/$B/gpu-cache FLASHJIT_ARCH=sm_90a
count() { python3 -c "import sqlite3;print(sqlite3.connect('$B/gpu-cache/kernels.db').execute('select count(*) from kernels').fetchone()[0])"; }
for pass in 1 2; do
  FLASHJIT_DRY_RUN=1 $B/tests/flashjit_gpu_tests "batch decode: production configurations*,batch decode: dtypes\, head dims\, knobs" | tail -1
  $B/tools/bench/flashjit_bench_decode --dry-run --configs gemma2,tp8 > /dev/null
  $B/tools/bench/flashjit_bench_decode --dry-run > /dev/null
  echo "pass $pass: kernels $(count)"
done
$B/flashjit cache prune
rm -rf $S && mkdir -p $S && cp -a $B/tests/flashjit_gpu_tests $B/tools/bench/flashjit_bench_decode $B/flashjit $B/libflashjit.so* $S/
cp -a $B/gpu-cache $S/ && rm -rf $S/gpu-cache/locks && strip --strip-unneeded $S/flashjit_* 2>/dev/null || true
git rev-parse HEAD > $S/commit.txt
du -sh $S
