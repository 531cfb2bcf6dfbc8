#!/usr/bin/env bash
# Session 5 "layer" helper, call 2: the one-row-per-block bulk form (stages 1, full grid) beside
# the resident-grid bulk forms, the default and the driver copy. [bulk] GPU cases (JIT disabled,
# no compile) with memcheck of the many-rows / one-row case beside them, then
# bench_norm --bulk alone on the GPU.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export FLASHJIT_DISABLE_JIT=1
timeout 30 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "[bulk_sanitize]" > $O/call2_memcheck.log 2>&1 &
m=$!
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 30 $S/flashjit_gpu_tests "[bulk_sanitize],rmsnorm bulk copy mode*" --durations yes > $O/call2_tests.log 2>&1
st "tests $?"; wait $m; st "memcheck $?"
tail -n 3 $O/call2_tests.log $O/call2_memcheck.log
OUT= timeout 20 stdbuf -oL $S/flashjit_bench_norm --bulk > $O/call2_bench_norm.log 2>&1
st "bench_norm $?"
cut -c1-190 $O/call2_bench_norm.log
