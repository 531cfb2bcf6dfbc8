#!/usr/bin/env bash
# Session 3 "layer" helper call 1 (as run from build-rope-stage/run.sh): rope GPU tests,
# bench_rope + torch layer ops (same call), memcheck + racecheck over the non-16k rope cases.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; } > $O/device.txt
st tests
FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 120 $S/flashjit_gpu_tests "[rope]" --durations yes > $O/tests.log 2>&1
st "tests exit $?"; tail -4 $O/tests.log
FLASHJIT_DISABLE_JIT=1 timeout 70 $S/flashjit_bench_rope > $O/bench_rope.log 2>&1
st "bench exit $?"
timeout 60 python3 tools/bench/torch_layer_ops.py > $O/torch.log 2>&1
st "torch exit $?"
F="rope: every form*,rope: shapes*,rope: long-context*,rope: every swept*"
FLASHJIT_DISABLE_JIT=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "$F" > $O/memcheck.log 2>&1 &
m=$!
FLASHJIT_DISABLE_JIT=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "$F" > $O/racecheck.log 2>&1
st "racecheck exit $?"
wait $m; st "memcheck exit $?"
tail -3 $O/memcheck.log $O/racecheck.log
grep -E "rope_|torch (rope|copy|device)" $O/bench_rope.log $O/torch.log | grep -E "default|torch" | cut -c1-170
