#!/usr/bin/env bash
# Session 4 "layer" helper, the one H200 call: [page] GPU tests (JIT disabled, no compile) beside
# memcheck and racecheck of the two small [page] cases (every form forced, the loop form's
# double-buffered shared memory included), then bench_page (copy of the same bytes, defaults,
# sweep, loop-form A/B), bench_norm (defaults) and torch_layer_ops.py, each alone on the GPU.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; } > $O/device.txt
F="append_paged_kv_cache writes every new row and nothing else,append_paged_kv_cache: every kernel form*"
FLASHJIT_DISABLE_JIT=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "$F" > $O/memcheck.log 2>&1 &
m=$!
FLASHJIT_DISABLE_JIT=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "$F" > $O/racecheck.log 2>&1 &
r=$!
FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 110 $S/flashjit_gpu_tests "[page]" --durations yes > $O/tests.log 2>&1
st "tests exit $?"; tail -n 3 $O/tests.log
wait $m; mc=$?; wait $r; rc=$?
st "memcheck exit $mc racecheck exit $rc"; tail -n 2 $O/memcheck.log; tail -n 2 $O/racecheck.log
FLASHJIT_DISABLE_JIT=1 OUT= timeout 40 stdbuf -oL $S/flashjit_bench_page > $O/bench_page.log 2>&1
st "bench_page exit $?"
FLASHJIT_DISABLE_JIT=1 OUT= timeout 15 stdbuf -oL $S/flashjit_bench_norm > $O/bench_norm.log 2>&1
st "bench_norm exit $?"
timeout 30 python3 tools/bench/torch_layer_ops.py > $O/torch.log 2>&1
st "torch exit $?"
cut -c1-175 $O/bench_page.log; grep -E "8192x8192|16384x4096|16384x32" $O/bench_norm.log | cut -c1-175
grep -E "copy|rms_norm |index_put" $O/torch.log
