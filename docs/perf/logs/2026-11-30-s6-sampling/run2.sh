#!/usr/bin/env bash
# Session 6 (sampling), device call 2: the draw's walk inlined again (call 1's __noinline__ cost
# every two-pass kernel 1-6 us) and candidates 8 with the default's lane columns. The top-p bench
# rows and the phase stamps (alone on the GPU), PyTorch's baselines (call 1's log did not come
# back: at most 8 files), then the whole [sampling] GPU suite (JIT disabled, no compile allowed;
# call 1's ran beside the sanitizers and hit its time limit in the fourth case) beside memcheck
# (4096 draws) on the top-p distribution case (call 1's filter split its name at the commas).
set -u
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
cp $S/commit.txt $OUT/commit.txt
L=$OUT/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) $*" >> $L; }
t start
OUT= timeout 30 $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/bench_top_p.log 2>&1
echo "bench exit $?" >> $OUT/bench_top_p.log; t bench top_p
OUT= timeout 30 $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $OUT/bench_stamps.log 2>&1
echo "bench exit $?" >> $OUT/bench_stamps.log; t stamps
timeout 60 python3 tools/bench/torch_sampling.py > $OUT/torch_sampling.log 2>&1
echo "torch exit $?" >> $OUT/torch_sampling.log; t torch
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 170 $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/tests.log 2>&1 &
P1=$!
FLASHJIT_SAMPLING_DRAWS=4096 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p: both kernels*" > $OUT/memcheck.log 2>&1
echo "memcheck exit $?" >> $OUT/memcheck.log; t memcheck
wait $P1; echo "tests exit $?" >> $OUT/tests.log; t tests
tail -n 5 $OUT/memcheck.log
grep -E "^[0-9.]+ s: |FAILED|failed|passed|exit" $OUT/tests.log | tail -25
cat $OUT/bench_stamps.log
grep -E 'top_p0.9(_noexch)? B=' $OUT/bench_top_p.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
tail -n 30 $OUT/torch_sampling.log
