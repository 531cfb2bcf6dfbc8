#!/usr/bin/env bash
# Session 9 (sampling), call 2 (argument: its timeout_s): 14 with pass 1's local adds as
# shared-memory reds (call 1: generic atomics, pass 1 +0.4-0.7 us). The top-p rows (default =
# 13's kernel at B = 1 / 64, 13, 14) twice, the B = 1 sweep (c8 with and without the slice
# cache, back to back) flat and peaked twice, the stamps; then the [sampling] GPU suite one
# process per case (8 at a time; names cut at their first comma), then memcheck (the same-tokens
# case, 14 only) beside racecheck (the determinism case, 14 only).
set -u
LIMIT=${1:-160}
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
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 20) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $O/bench_top_p$i.log 2>&1
  echo "bench exit $?" >> $O/bench_top_p$i.log
  for sd in 1 5; do
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 15) $S/flashjit_bench_sampling --only "B=1 V=128256 std$sd" > $O/bench_sweep_b1_std${sd}_$i.log 2>&1
    echo "bench exit $?" >> $O/bench_sweep_b1_std${sd}_$i.log
  done
  t bench $i; pack
done
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 15) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $O/bench_stamps.log 2>&1
echo "bench exit $?" >> $O/bench_stamps.log; t stamps; pack
$S/flashjit_gpu_tests "[sampling]" --list-test-names-only | grep -v '^$' | grep -vE '^(GPU tests: seed|engine: |[0-9]+ matching)' | sed 's/,.*$/*/' > $O/cases.txt
R=$(left 120)
run_case() {
  local n="$1" f="$O/case_$(echo "$1" | tr -c 'A-Za-z0-9' '_' | cut -c1-60).log"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R $S/flashjit_gpu_tests "$n" --durations yes > "$f" 2>&1
  echo "exit $? $n" >> "$f"
}
export -f run_case; export O S R
xargs -P 8 -I{} bash -c 'run_case "{}"' < $O/cases.txt
t tests; pack
R=$(left 60)
FLASHJIT_SAMPLING_CANDIDATES=14 FLASHJIT_SAMPLING_DRAWS=4096 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p: the fast digit scans*" > $O/memcheck.log 2>&1 &
PM=$!
FLASHJIT_SAMPLING_CANDIDATES=14 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "same seed and offset*" > $O/racecheck.log 2>&1 &
PR=$!
wait $PR; echo "racecheck exit $? (limit ${R}s)" >> $O/racecheck.log; t racecheck
wait $PM; echo "memcheck exit $? (limit ${R}s)" >> $O/memcheck.log; t memcheck
pack
tail -n 3 $O/memcheck.log $O/racecheck.log
for f in $O/case_*.log; do grep -hE "^exit|test cases|All tests passed" "$f" | tr '\n' ' '; echo; done | cut -c1-140
grep -hE 'top_p0.9(_form|_push)? B=(1|64) V=128256' $O/bench_top_p1.log $O/bench_top_p2.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
grep -hE 'top_p0.9 c8' $O/bench_sweep_b1_std*_*.log | awk '{print $2,$3,$4,$5,$6,$7,$(NF-3)}'
grep -h "stamps" $O/bench_stamps.log | sed 's/.*std/std/' | cut -c1-300
cat $L
