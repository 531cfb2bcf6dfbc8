#!/usr/bin/env bash
# Session 5 (sampling), call 2: the lean cluster steps (kFormClusterLean) and the lane-window
# rule (one block per row, more rows than SMs). The top-p bench rows twice (alone on the GPU),
# then the [sampling] GPU suite beside memcheck (4096 draws) and racecheck on the cases that run
# the changed top-p kernel (clusters of 8 and 2, one 256-thread block per row with the window).
set -u
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
L=$OUT/call2-device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) $*" >> $L; }
t start
OUT= timeout 25 $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/call2-bench_top_p.log 2>&1
echo "bench exit $?" >> $OUT/call2-bench_top_p.log; t bench
OUT= timeout 25 $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/call2-bench_top_p_repeat.log 2>&1
echo "bench exit $?" >> $OUT/call2-bench_top_p_repeat.log; t repeat
C="top-p: both kernels, and candidate overflow, draw from the exact distribution,bad rows give in-range tokens and a cleared valid flag,same seed and offset give the same tokens; another offset differs"
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 100 $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/call2-tests.log 2>&1 &
P1=$!
FLASHJIT_SAMPLING_DRAWS=4096 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "$C" > $OUT/call2-memcheck.log 2>&1 &
P2=$!
FLASHJIT_SAMPLING_DRAWS=256 timeout 90 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests \
  "bad rows give in-range tokens and a cleared valid flag,same seed and offset give the same tokens; another offset differs" > $OUT/call2-racecheck.log 2>&1
echo "racecheck exit $?" >> $OUT/call2-racecheck.log; t racecheck
wait $P2; echo "memcheck exit $?" >> $OUT/call2-memcheck.log; t memcheck
wait $P1; echo "tests exit $?" >> $OUT/call2-tests.log; t tests
for f in tests memcheck racecheck; do tail -n 4 $OUT/call2-$f.log; done
grep -E 'top_p0.9' $OUT/call2-bench_top_p.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
