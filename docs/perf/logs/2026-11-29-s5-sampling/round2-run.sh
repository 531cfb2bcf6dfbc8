#!/usr/bin/env bash
# Session 5 (sampling), round 2, the one device call: pass 2's per-lane candidate columns
# (tuning.candidates 6, bench row top_p0.9_lanecols) beside the default and the earlier forms.
# The top-p bench rows three times (alone on the GPU), then the [sampling] GPU suite (JIT
# disabled, no compile allowed) beside memcheck (4096 draws) on the top-p distribution case and
# the determinism case, and racecheck on the determinism case (both forms: a cluster of 8 at 1
# row, clusters of 2 at 64 rows, one 256-thread block per row at 200 rows).
set -u
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
L=$OUT/round2-device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) $*" >> $L; }
t start
for i in 1 2 3; do
  OUT= timeout 25 $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/round2-bench_top_p$i.log 2>&1
  echo "bench exit $?" >> $OUT/round2-bench_top_p$i.log; t bench $i
done
C="top-p: both kernels, and candidate overflow, draw from the exact distribution,same seed and offset give the same tokens; another offset differs"
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 130 $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/round2-tests.log 2>&1 &
P1=$!
FLASHJIT_SAMPLING_DRAWS=4096 timeout 130 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "$C" > $OUT/round2-memcheck.log 2>&1 &
P2=$!
FLASHJIT_SAMPLING_DRAWS=256 timeout 110 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests \
  "same seed and offset give the same tokens; another offset differs" > $OUT/round2-racecheck.log 2>&1
echo "racecheck exit $?" >> $OUT/round2-racecheck.log; t racecheck
wait $P2; echo "memcheck exit $?" >> $OUT/round2-memcheck.log; t memcheck
wait $P1; echo "tests exit $?" >> $OUT/round2-tests.log; t tests
for f in tests memcheck racecheck; do tail -n 4 $OUT/round2-$f.log; done
grep -E 'top_p0.9(_lanecols)? B=' $OUT/round2-bench_top_p1.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
