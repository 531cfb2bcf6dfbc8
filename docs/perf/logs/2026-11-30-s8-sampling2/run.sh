#!/usr/bin/env bash
# Session 8 round 2 (sampling), the one A/B call (argument: its timeout_s). The top-p bench rows
# (the default = every form's code, 12 = the same, 13 = the form compiled in, and the older forms;
# B = 1 / 64 / 256 x 128256 / 32000, flat and peaked), the phase stamps at B = 1 and 64 (-1, 12,
# 13), PyTorch's sort-based baselines; then, side by side, the whole [sampling] GPU suite (JIT
# disabled, no compile allowed), memcheck (4096 draws: the same-tokens case, every changed
# kernel) and racecheck on the determinism case. Logs go into one tarball.
set -u
LIMIT=${1:-150}
ROOT=$PWD
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$ROOT/$S/gpu-cache LD_LIBRARY_PATH=$ROOT/$S FLASHJIT_LIBRARY=$ROOT/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
O=$OUT/l; mkdir -p $O
cp $S/commit.txt $O/commit.txt
L=$O/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) ${SECONDS}s $*" >> $L; }
left() { local r=$((LIMIT - 6 - SECONDS)); [ $r -gt $1 ] && r=$1; [ $r -lt 1 ] && r=1; echo $r; }
pack() { tar czf $OUT/logs.tgz -C $O . 2>/dev/null; }
t start
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 30) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $O/bench_top_p.log 2>&1
echo "bench exit $?" >> $O/bench_top_p.log; t bench top_p; pack
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 15) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $O/bench_stamps.log 2>&1
echo "bench exit $?" >> $O/bench_stamps.log; t stamps; pack
timeout $(left 20) python3 tools/bench/torch_sampling.py > $O/torch_sampling.log 2>&1
echo "torch exit $?" >> $O/torch_sampling.log; t torch; pack
R=$(left 200)
FLASHJIT_SAMPLING_DRAWS=4096 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p: the fast digit scans*" > $O/memcheck.log 2>&1 &
PM=$!
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "same seed and offset*" > $O/racecheck.log 2>&1 &
PR=$!
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R $S/flashjit_gpu_tests "[sampling]" --durations yes > $O/tests.log 2>&1
echo "tests exit $? (limit ${R}s)" >> $O/tests.log; t tests; pack
wait $PR; echo "racecheck exit $? (limit ${R}s)" >> $O/racecheck.log; t racecheck
wait $PM; echo "memcheck exit $? (limit ${R}s)" >> $O/memcheck.log; t memcheck
pack
tail -n 2 $O/memcheck.log $O/racecheck.log
grep -E "^[0-9.]+ s: |FAILED|failed|passed|exit" $O/tests.log | tail -16
grep -E 'top_p0.9(_runform|_form)? B=' $O/bench_top_p.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
cat $L
rm -rf $O
