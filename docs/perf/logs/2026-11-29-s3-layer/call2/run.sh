#!/usr/bin/env bash
# Session 3 "layer" helper call 2 (verification of the full-grid default): rope GPU tests, the
# default rows of bench_rope (the first rows; cut by timeout), memcheck + racecheck.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; } > $O/device.txt
st tests
FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 40 $S/flashjit_gpu_tests "[rope]" --durations yes > $O/tests.log 2>&1
st "tests exit $?"; tail -n 4 $O/tests.log
FLASHJIT_DISABLE_JIT=1 OUT= timeout 9 stdbuf -oL $S/flashjit_bench_rope > $O/bench_rope.log 2>&1
st "bench (cut) exit $?"
F="rope: every form*,rope: shapes*,rope: long-context*,rope: every swept*"
FLASHJIT_DISABLE_JIT=1 timeout 30 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "$F" > $O/memcheck.log 2>&1 &
m=$!
FLASHJIT_DISABLE_JIT=1 timeout 30 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "$F" > $O/racecheck.log 2>&1
r=$?
wait $m; mc=$?
st "memcheck exit $mc racecheck exit $r"
tail -n 2 $O/memcheck.log; tail -n 2 $O/racecheck.log
cut -c1-150 $O/bench_rope.log
