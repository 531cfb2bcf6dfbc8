#!/usr/bin/env bash
# Session 7 (sampling), call 2: the final defaults (the fast scans with the exact prefix) on the
# final tree (argument: its timeout_s). The top-p bench rows (the default, 9 = without the exact
# prefix, 11 = session 6's block scans, and the older forms), the phase stamps (-1, 9, 11), the
# whole [sampling] GPU suite alone (JIT disabled, no compile allowed), then memcheck (4096 draws,
# the same-tokens case: the default and 9 against 11, clusters of 8 / 2, one block per row)
# beside racecheck on the determinism case (the default first) in the time left. PyTorch ran in
# call 1. Logs go into one tarball (at most 8 files come back).
set -u
LIMIT=${1:-170}
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
cp $S/commit.txt $OUT/commit.txt
L=$OUT/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) ${SECONDS}s $*" >> $L; }
left() { local r=$((LIMIT - 8 - SECONDS)); [ $r -gt $1 ] && r=$1; [ $r -lt 1 ] && r=1; echo $r; }
t start
OUT= timeout $(left 40) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $OUT/bench_top_p.log 2>&1
echo "bench exit $?" >> $OUT/bench_top_p.log; t bench top_p
OUT= timeout $(left 30) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $OUT/bench_stamps.log 2>&1
echo "bench exit $?" >> $OUT/bench_stamps.log; t stamps
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 160) $S/flashjit_gpu_tests "[sampling]" --durations yes > $OUT/tests.log 2>&1
echo "tests exit $?" >> $OUT/tests.log; t tests
R=$(left 60)
if [ $R -ge 10 ]; then
  FLASHJIT_SAMPLING_DRAWS=4096 timeout $R compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p: the fast digit scans*" > $OUT/memcheck.log 2>&1 &
  P=$!
  timeout $R compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "same seed and offset*" > $OUT/racecheck.log 2>&1
  echo "racecheck exit $? (limit ${R}s)" >> $OUT/racecheck.log; t racecheck
  wait $P; echo "memcheck exit $? (limit ${R}s)" >> $OUT/memcheck.log; t memcheck
else
  t "sanitizers left out: ${R}s left"
fi
tar czf $OUT/logs.tgz -C $OUT device.log bench_top_p.log bench_stamps.log tests.log memcheck.log racecheck.log commit.txt 2>/dev/null
tail -n 2 $OUT/memcheck.log $OUT/racecheck.log
grep -E "^[0-9.]+ s: |FAILED|failed|passed|exit" $OUT/tests.log | tail -16
grep -E 'top_p0.9(_fastscan|_blockscan)? B=' $OUT/bench_top_p.log | grep V=128256 | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
cat $L
