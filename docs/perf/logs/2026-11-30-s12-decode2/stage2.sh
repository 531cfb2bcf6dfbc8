#!/bin/bash
# Stages build-decode for session 12 round 2's device call: the dry runs compile every kernel the
# call launches (bench_decode in each form of $FORMS_FILE, the decode GPU cases), then the stage copy.
set -e
B=build-decode; S=build-decode-stage; L=docs/perf/logs/2026-11-30-s12-decode2
cmake --build $B -j2 --target flashjit_gpu_tests flashjit flashjit_bench_decode | tail -1
export FLASHJIT_CACHE_DIR=$PWD/$B/gpu-cache FLASHJIT_ARCH=sm_90a
source $L/${FORMS_FILE:-forms.sh}
count() { python3 -c "import sqlite3;print(sqlite3.connect('$B/gpu-cache/kernels.db').execute('select count(*) from kernels').fetchone()[0])"; }
for pass in 1 2; do
  FLASHJIT_DRY_RUN=1 $B/tests/flashjit_gpu_tests "[decode]" | tail -1

  for f in "${FORMS[@]}"; do
    set -- $f; lag=$2; shapes=$3; shift 3
    $B/tools/bench/flashjit_bench_decode --dry-run --shapes $shapes "$@" > /dev/null
  done
  for f in "${STAMPS[@]}"; do
    set -- $f; lag=$2; shapes=$3; shift 3
    $B/tools/bench/flashjit_bench_decode --dry-run --shapes $shapes --stamps /tmp/dry-stamps.txt "$@" > /dev/null
  done
  echo "pass $pass: kernels $(count)"
done
$B/flashjit cache prune
rm -rf $S && mkdir -p $S && cp -a $B/tests/flashjit_gpu_tests $B/tools/bench/flashjit_bench_decode $B/flashjit $B/libflashjit.so* $S/
cp -a $B/gpu-cache $S/ && rm -rf $S/gpu-cache/locks && strip --strip-unneeded $S/flashjit_* 2>/dev/null || true
git rev-parse HEAD > $S/commit.txt
du -sh $S
