#!/usr/bin/env bash
# Session 11 (sampling), call 2 (argument: its timeout_s). The top-p rows twice (default = the
# stage's 22: round 2's push form + the last cluster barrier relaxed + the owner's inputs early;
# 21 = the relaxed end alone; 19 = the owner's inputs early alone; 20 = session 10 round 2's
# default, the A/B baseline; the other top_p0.9 rows ride along), the other ops' rows once
# (top-k, min-p, joint: kernels unchanged), the stamps (-1 = 22, 21, 20 at B = 1 and 64), then
# the [sampling] GPU suite one process per case (8 at a time; names cut at their first comma)
# beside memcheck (the same-tokens case, 19, 21, 22 only, 4096 draws) and racecheck (the
# determinism case, 22 only).
set -u
LIMIT=${1:-230}
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
for i in 1 2; do
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 45) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $O/bench_top_p$i.log 2>&1
  echo "bench exit $?" >> $O/bench_top_p$i.log
  t bench $i; pack
done
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 40) $S/flashjit_bench_sampling --no-sweep > $O/bench_all.log 2>&1
echo "bench exit $?" >> $O/bench_all.log; t bench all; pack
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 20) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $O/bench_stamps.log 2>&1
echo "bench exit $?" >> $O/bench_stamps.log; t stamps; pack
$S/flashjit_gpu_tests "[sampling]" --list-test-names-only | grep -v '^$' | grep -vE '^(GPU tests: seed|engine: |[0-9]+ matching)' | sed 's/,.*$/*/' > $O/cases.txt
R=$(left 130)
FLASHJIT_SAMPLING_CANDIDATES=19,21,22 FLASHJIT_SAMPLING_DRAWS=4096 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p: the fast digit scans*" > $O/memcheck.log 2>&1 &
PM=$!
FLASHJIT_SAMPLING_CANDIDATES=22 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "same seed and offset*" > $O/racecheck.log 2>&1 &
PR=$!
run_case() {
  local n="$1" f="$O/case_$(echo "$1" | tr -c 'A-Za-z0-9' '_' | cut -c1-60).log"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R $S/flashjit_gpu_tests "$n" --durations yes > "$f" 2>&1
  echo "exit $? $n" >> "$f"
}
export -f run_case; export O S R
xargs -P 8 -I{} bash -c 'run_case "{}"' < $O/cases.txt
t tests; pack
wait $PR; echo "racecheck exit $? (limit ${R}s)" >> $O/racecheck.log; t racecheck
wait $PM; echo "memcheck exit $? (limit ${R}s)" >> $O/memcheck.log; t memcheck
pack
tail -n 2 $O/memcheck.log $O/racecheck.log
for f in $O/case_*.log; do grep -hE "^exit|test cases|All tests passed" "$f" | tr '\n' ' '; echo; done | cut -c1-110
grep -hE 'top_p0.9(_early|_endrelax|_r2)? B=(1|64) V=(128256|32000)' $O/bench_top_p1.log $O/bench_top_p2.log | sed 's/  */ /g; s/TB\/s//g; s/TFLOP\/s//g' | cut -c1-120
grep -h "stamps" $O/bench_stamps.log | sed -E 's/.*(cand[-0-9]+[^:]*B=[0-9]+ V=[0-9]+ std[0-9]).*kernel ([0-9.]+ us).*owner ([0-9]+).*end barrier ([0-9]+).*/\1 \2 own \3 endb \4/' | cut -c1-100
cat $L
