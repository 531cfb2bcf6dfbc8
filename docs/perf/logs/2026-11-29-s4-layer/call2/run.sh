#!/usr/bin/env bash
# Session 4 "layer" helper, call 2 (commit e5f795b: fp8 default = loop form): bench_page (its own
# same-bytes device copy row, fixed after call 1; the new fp8 default), then the [page] GPU tests,
# whose 16k-token fp8 case now runs the loop form.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; } > $O/device.txt
FLASHJIT_DISABLE_JIT=1 OUT= timeout 16 stdbuf -oL $S/flashjit_bench_page > $O/bench_page.log 2>&1
st "bench_page exit $?"
FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 56 $S/flashjit_gpu_tests "[page]" --durations yes > $O/tests.log 2>&1
st "tests exit $?"; tail -n 3 $O/tests.log
grep -E "device_copy|nnz 16384|nnz 8192|nnz 1 |nnz 64 .*default" $O/bench_page.log | cut -c1-170
