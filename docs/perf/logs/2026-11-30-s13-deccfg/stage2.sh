#!/bin/bash
# Stages build-deccfg for call 2: the [decode] GPU cases (dry run), bench_decode in each form of
# forms2.sh (and the default grid's plans, unchanged), twice (the cache's count must stay).
set -e
B=build-deccfg; S=build-deccfg-stage; L=docs/perf/logs/2026-11-30-s13-deccfg
cmake --build $B -j2 --target flashjit_gpu_tests flashjit flashjit_bench_decode | tail -1
export FLASHJIT_CACHE_DIR=$PWD/$B/gpu-cache FLASHJIT_ARCH=sm_90a
source $L/forms2.sh
count() { python3 -c "import sqlite3;print(sqlite3.connect('$B/gpu-cache/kernels.db').execute('select count(*) from kernels').fetchone()[0])"; }
for pass in 1 2; do
  FLASHJIT_DRY_RUN=1 $B/tests/flashjit_gpu_tests "[decode]" | tail -1
  for f in "${FORMS[@]}"; do
    set -- $f
    env ${2/#-/X=1} $B/tools/bench/flashjit_bench_decode --dry-run --configs $3 --shapes $4 > /dev/null
  done
  echo "pass $pass: kernels $(count)"
done
$B/flashjit cache prune
rm -rf $S && mkdir -p $S && cp -a $B/tests/flashjit_gpu_tests $B/tools/bench/flashjit_bench_decode $B/flashjit $B/libflashjit.so* $S/
cp -a $B/gpu-cache $S/ && rm -rf $S/gpu-cache/locks && strip --strip-unneeded $S/flashjit_* 2>/dev/null || true
git rev-parse HEAD > $S/commit.txt
du -sh $S
