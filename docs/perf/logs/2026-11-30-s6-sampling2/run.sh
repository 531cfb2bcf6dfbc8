#!/usr/bin/env bash
# Session 6 round 2 (sampling2), the one device call (argument: its timeout_s). In order, each
# step limited to the time left: the top-p bench rows (the default against candidates 9, the
# fast scans (variant field fast_scan), same call, B = 1 / 64 / 256 x 128256 / 32000, flat and peaked)
# and the phase stamps at B = 1 and 64 (both forms); the whole [sampling] GPU suite alone (JIT
# disabled, no compile allowed) in three runs: the 8 short cases (the new same-tokens case,
# determinism, stamps, ...), the top-p distribution case, the other 4 (cluster-split rows and
# the other distribution cases, mask); then memcheck (4096 draws) on the phase-stamps case (top-p,
# the changed kernel: clusters of 8 and 2, one block per row) beside racecheck on the
# determinism case (its first rounds: the default in clusters of 8 and 2).
set -u
LIMIT=${1:-150}  # the call's timeout_s
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
cp $S/commit.txt $OUT/commit.txt
L=$OUT/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) ${SECONDS}s $*" >> $L; }
left() { local r=$((LIMIT - 3 - SECONDS)); [ $r -gt $1 ] && r=$1; [ $r -lt 1 ] && r=1; echo $r; }
t start
OUT= timeout $(left 15) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/bench_top_p.log 2>&1
echo "bench exit $?" >> $OUT/bench_top_p.log; t bench top_p
OUT= timeout $(left 10) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $OUT/bench_stamps.log 2>&1
echo "bench exit $?" >> $OUT/bench_stamps.log; t stamps
export FLASHJIT_EXPECT_NO_COMPILE=1
for f in "[sampling]~*exact*" "top-p: both kernels*" "cluster-split*,sampling ops draw*,sampling from fp16*,top-k mask*"; do
  T=$(left 70)
  echo "=== $f (limit ${T}s)" >> $OUT/tests.log
  timeout $T $S/flashjit_gpu_tests "$f" --durations yes >> $OUT/tests.log 2>&1
  echo "tests exit $?" >> $OUT/tests.log; t tests "$f"
done
unset FLASHJIT_EXPECT_NO_COMPILE
R=$(left 60)
if [ $R -ge 10 ]; then
  FLASHJIT_SAMPLING_DRAWS=4096 timeout $R compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p phase stamps*" > $OUT/memcheck.log 2>&1 &
  P=$!
  timeout $R compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "same seed and offset*" > $OUT/racecheck.log 2>&1
  echo "racecheck exit $? (limit ${R}s)" >> $OUT/racecheck.log; t racecheck
  wait $P; echo "memcheck exit $? (limit ${R}s)" >> $OUT/memcheck.log; t memcheck
  tail -n 3 $OUT/memcheck.log $OUT/racecheck.log
else
  t "sanitizers left out: ${R}s left"
fi
grep -E "^===|^[0-9.]+ s: |FAILED|failed|passed|exit" $OUT/tests.log | tail -24
head -40 $OUT/bench_stamps.log
grep -E 'top_p0.9(_fastscan)? B=' $OUT/bench_top_p.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
cat $L
