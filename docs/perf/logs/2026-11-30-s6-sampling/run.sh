#!/usr/bin/env bash
# Session 6 (sampling), the device call: the cluster exchange (kFormClusterExchange, the default
# in clusters) against the default without it (tuning.candidates 8, bench row top_p0.9_noexch),
# the phase stamps (bench --stamps: per-phase ns at B = 1 and 64 x 128256, both forms), the full
# table and PyTorch's baselines, then the [sampling] GPU suite (JIT disabled, no compile allowed)
# beside memcheck (4096 draws) on the cases that run the changed kernel, and racecheck on the
# determinism case (a cluster of 8 at 1 row, clusters of 2 at 64 rows, one block per row at 200
# rows; both forms) and the bad-rows case.
set -u
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
cp $S/commit.txt $OUT/commit.txt
L=$OUT/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) $*" >> $L; }
t start
for i in 1 2; do
  OUT= timeout 30 $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/bench_top_p$i.log 2>&1
  echo "bench exit $?" >> $OUT/bench_top_p$i.log; t bench top_p $i
done
OUT= timeout 40 $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $OUT/bench_stamps.log 2>&1
echo "bench exit $?" >> $OUT/bench_stamps.log; t stamps
OUT= timeout 60 $S/flashjit_bench_sampling --no-sweep > $OUT/bench_sampling.log 2>&1
echo "bench exit $?" >> $OUT/bench_sampling.log; t bench table
timeout 60 python3 tools/bench/torch_sampling.py > $OUT/torch_sampling.log 2>&1
echo "torch exit $?" >> $OUT/torch_sampling.log; t torch
C="top-p: both kernels, and candidate overflow, draw from the exact distribution,cluster-split rows draw from the exact filtered distribution,bad rows give in-range tokens and a cleared valid flag,same seed and offset give the same tokens; another offset differs,top-p phase stamps leave the tokens unchanged and come in order"
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 150 $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/tests.log 2>&1 &
P1=$!
FLASHJIT_SAMPLING_DRAWS=4096 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "$C" > $OUT/memcheck.log 2>&1 &
P2=$!
FLASHJIT_SAMPLING_DRAWS=256 timeout 140 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests \
  "bad rows give in-range tokens and a cleared valid flag,same seed and offset give the same tokens; another offset differs" > $OUT/racecheck.log 2>&1
echo "racecheck exit $?" >> $OUT/racecheck.log; t racecheck
wait $P2; echo "memcheck exit $?" >> $OUT/memcheck.log; t memcheck
wait $P1; echo "tests exit $?" >> $OUT/tests.log; t tests
for f in tests memcheck racecheck; do tail -n 4 $OUT/$f.log; done
cat $OUT/bench_stamps.log
grep -E 'top_p0.9(_noexch)? B=' $OUT/bench_top_p1.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
