#!/usr/bin/env bash
# The one device call of session 4 (sampling): tests, bench A/B, PyTorch, sanitizers, one ncu.
# Run from the repository root on the GPU machine with build-sampling-stage carried; logs in $OUT.
set -u
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.log
date +%T >> $OUT/device.log
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 100 $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/tests.log 2>&1
echo "tests exit $?" >> $OUT/tests.log; tail -3 $OUT/tests.log; date +%T
OUT= timeout 75 $S/flashjit_bench_sampling --no-sweep > $OUT/bench_sampling.log 2>&1
echo "bench exit $?" >> $OUT/bench_sampling.log; date +%T
timeout 50 python3 tools/bench/torch_sampling.py > $OUT/torch_sampling.log 2>&1
echo "torch exit $?" >> $OUT/torch_sampling.log; date +%T
FLASHJIT_SAMPLING_DRAWS=4096 timeout 50 compute-sanitizer --tool memcheck $S/flashjit_gpu_tests "[sampling]" > $OUT/memcheck.log 2>&1
echo "memcheck exit $?" >> $OUT/memcheck.log; tail -3 $OUT/memcheck.log; date +%T
FLASHJIT_SAMPLING_DRAWS=256 timeout 30 compute-sanitizer --tool racecheck $S/flashjit_gpu_tests "bad rows give in-range tokens and a cleared valid flag,same seed and offset give the same tokens; another offset differs,a captured graph replays with seed/offset read from device memory" > $OUT/racecheck.log 2>&1
echo "racecheck exit $?" >> $OUT/racecheck.log; tail -3 $OUT/racecheck.log; date +%T
timeout 25 ncu --set full --clock-control none -k regex:flashjit_sampling -c 1 $S/flashjit_bench_sampling --only "top_p0.9_2pass B=64 V=128256 std1" --no-sweep > $OUT/ncu-top_p-2pass-B64-flat.txt 2>&1
echo "ncu exit $?" >> $OUT/ncu-top_p-2pass-B64-flat.txt; date +%T
grep -E 'top_p0.9 |top_p0.9_radix|top_p0.9_2pass' $OUT/bench_sampling.log | head -60
