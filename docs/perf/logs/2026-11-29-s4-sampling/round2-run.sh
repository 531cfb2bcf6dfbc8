#!/usr/bin/env bash
# Round 2 of session 4 (sampling), one device call: bench (full table + a repeat of the top-p A/B
# rows) alone on the GPU, then the PyTorch baselines, then the whole [sampling] GPU suite with
# memcheck and racecheck beside it; one ncu of the default two-pass kernel before them (correctness only: nothing is timed then). Logs in $OUT.
set -u
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/round2-device.log
git log --oneline -1 >> $OUT/round2-device.log
t() { echo "$(date +%T) $*" >> $OUT/round2-device.log; }
t start
OUT= timeout 40 $S/flashjit_bench_sampling --no-sweep > $OUT/round2-bench_sampling.log 2>&1
echo "bench exit $?" >> $OUT/round2-bench_sampling.log; t bench
OUT= timeout 15 $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/round2-bench_ab_repeat.log 2>&1
echo "bench exit $?" >> $OUT/round2-bench_ab_repeat.log; t ab-repeat
timeout 30 python3 tools/bench/torch_sampling.py > $OUT/round2-torch_sampling.log 2>&1
echo "torch exit $?" >> $OUT/round2-torch_sampling.log; t torch
timeout 25 ncu --set full --clock-control none -k regex:flashjit_sampling -c 1 $S/flashjit_bench_sampling --only "top_p0.9_2pass B=64 V=128256 std1" --no-sweep > $OUT/round2-ncu-top_p-2pass-B64-flat.txt 2>&1
echo "ncu exit $?" >> $OUT/round2-ncu-top_p-2pass-B64-flat.txt; t ncu
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 95 $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/round2-tests.log 2>&1 &
P1=$!
FLASHJIT_SAMPLING_DRAWS=4096 timeout 95 compute-sanitizer --tool memcheck $S/flashjit_gpu_tests "[sampling]" > $OUT/round2-memcheck.log 2>&1 &
P2=$!
FLASHJIT_SAMPLING_DRAWS=256 timeout 60 compute-sanitizer --tool racecheck $S/flashjit_gpu_tests "bad rows give in-range tokens and a cleared valid flag,same seed and offset give the same tokens; another offset differs" > $OUT/round2-racecheck.log 2>&1
echo "racecheck exit $?" >> $OUT/round2-racecheck.log; t racecheck
wait $P1; echo "tests exit $?" >> $OUT/round2-tests.log; t tests
wait $P2; echo "memcheck exit $?" >> $OUT/round2-memcheck.log; t memcheck
for f in tests memcheck racecheck; do tail -n 4 $OUT/round2-$f.log; done
grep -E 'top_p0.9 |top_p0.9_' $OUT/round2-bench_ab_repeat.log | head -60
