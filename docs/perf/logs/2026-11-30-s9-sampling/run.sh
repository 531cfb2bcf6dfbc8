#!/usr/bin/env bash
# Session 9 (sampling), the one A/B call (argument: its timeout_s). In order, nothing beside the
# GPU suite: the bench without the sweep twice (the default = 13's kernel at B = 1 and 64, 13 and
# 14 (digit 0's merge in one cluster barrier) in adjacent rows, every op incl. the joint rows),
# the sweep at B = 1 flat with back-to-back times (synced - b2b per cluster size), the stamps
# (13, 14, 13, 14 at B = 1 and 64 x 128256, flat and peaked), PyTorch's sort-based baselines;
# the [sampling] GPU suite one process per case (8 at a time, JIT disabled, no compile allowed);
# then memcheck (4096 draws: the same-tokens case with 14 only, against 11) beside racecheck
# (the determinism case with 14 only). Logs go into one tarball.
set -u
LIMIT=${1:-280}
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
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 40) $S/flashjit_bench_sampling --no-sweep > $O/bench$i.log 2>&1
  echo "bench exit $?" >> $O/bench$i.log; t bench $i; pack
done
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 25) $S/flashjit_bench_sampling --only "B=1 V=128256 std1" > $O/bench_sweep_b1.log 2>&1
echo "bench exit $?" >> $O/bench_sweep_b1.log; t sweep; pack
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 15) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $O/bench_stamps.log 2>&1
echo "bench exit $?" >> $O/bench_stamps.log; t stamps; pack
timeout $(left 20) python3 tools/bench/torch_sampling.py > $O/torch_sampling.log 2>&1
echo "torch exit $?" >> $O/torch_sampling.log; t torch; pack
# The GPU suite, one process per case (Catch2 splits names at commas: a wildcard there).
$S/flashjit_gpu_tests "[sampling]" --list-test-names-only | grep -v '^$' | grep -vE '^(GPU tests: seed|engine: |[0-9]+ matching)' | sed 's/,/*/g' > $O/cases.txt
R=$(left 130)
run_case() {
  local n="$1" f="$O/case_$(echo "$1" | tr -c 'A-Za-z0-9' '_' | cut -c1-60).log"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R $S/flashjit_gpu_tests "$n" > "$f" 2>&1
  echo "exit $? $n" >> "$f"
}
export -f run_case; export O S R
xargs -P 8 -I{} bash -c 'run_case "{}"' < $O/cases.txt
t tests; pack
R=$(left 150)
FLASHJIT_SAMPLING_CANDIDATES=14 FLASHJIT_SAMPLING_DRAWS=4096 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p: the fast digit scans*" > $O/memcheck.log 2>&1 &
PM=$!
FLASHJIT_SAMPLING_CANDIDATES=14 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "same seed and offset*" > $O/racecheck.log 2>&1 &
PR=$!
wait $PR; echo "racecheck exit $? (limit ${R}s)" >> $O/racecheck.log; t racecheck
wait $PM; echo "memcheck exit $? (limit ${R}s)" >> $O/memcheck.log; t memcheck
pack
tail -n 3 $O/memcheck.log $O/racecheck.log
for f in $O/case_*.log; do grep -hE "^exit|test cases|All tests passed" "$f" | tr '\n' ' '; echo; done
grep -hE 'top_p0.9(_form|_push)? B=(1|64) V=128256' $O/bench1.log $O/bench2.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
grep -h "stamps" $O/bench_stamps.log | cut -c1-150
cat $L
