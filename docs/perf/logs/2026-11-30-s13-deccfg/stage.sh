#!/bin/bash
# Stages build-deccfg for session 13 deccfg's device calls: the dry runs compile every kernel the
# call launches (bench_decode over every named configuration, plain and with --stamps; the
# [decode] GPU cases when TESTS=1), checked twice (the cache's count must stay), then the stage copy.
set -e
B=build-deccfg; S=build-deccfg-stage; L=docs/perf/logs/2026-11-30-s13-deccfg
CFGS=${CFGS:-base,tp8,tp4,qwen7b,gemma2,gemma2w,mha,d64,page1,page64,f16}
cmake --build $B -j2 --target flashjit_gpu_tests flashjit flashjit_bench_decode | tail -1
export FLASHJIT_CACHE_DIR=$PWD/$B/gpu-cache FLASHJIT_ARCH=sm_90a
count() { python3 -c "import sqlite3;print(sqlite3.connect('$B/gpu-cache/kernels.db').execute('select count(*) from kernels').fetchone()[0])"; }
for pass in 1 2; do
  [ "${TESTS:-0}" = 1 ] && FLASHJIT_DRY_RUN=1 $B/tests/flashjit_gpu_tests "[decode]" | tail -1
  $B/tools/bench/flashjit_bench_decode --dry-run --configs $CFGS > /dev/null
  $B/tools/bench/flashjit_bench_decode --dry-run --configs $CFGS --stamps /tmp/dry-stamps.txt > /dev/null
  for extra in ${EXTRA_ENVS:-}; do
    env $extra $B/tools/bench/flashjit_bench_decode --dry-run --configs $CFGS > /dev/null
  done
  echo "pass $pass: kernels $(count)"
done
$B/flashjit cache prune
rm -rf $S && mkdir -p $S && cp -a $B/tests/flashjit_gpu_tests $B/tools/bench/flashjit_bench_decode $B/flashjit $B/libflashjit.so* $S/
cp -a $B/gpu-cache $S/ && rm -rf $S/gpu-cache/locks && strip --strip-unneeded $S/flashjit_* 2>/dev/null || true
git rev-parse HEAD > $S/commit.txt
du -sh $S
