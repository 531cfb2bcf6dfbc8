#!/usr/bin/env bash
# Session 10 (sampling), the one A/B call (argument: its timeout_s). The top-p rows (default,
# 13, 14 = 13 with digit 3's counts pushed, and the default / 13 / 14 without the slice cache;
# the joint and k-first rows match "top_p0.9" too) twice, the stamps (-1 and 14; B = 1 also
# uncached); the [sampling] GPU suite one process per case (8 at a time; names cut at their
# first comma); memcheck (the same-tokens case, 14 only) beside racecheck (the determinism case,
# 14 only); PyTorch's sort-based baselines; one ncu launch of the default at 64 x 128256 flat
# (DRAM bytes and L2 hits: does pass 2 read the L2?).
set -u
LIMIT=${1:-300}
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
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 40) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $O/bench_top_p$i.log 2>&1
  echo "bench exit $?" >> $O/bench_top_p$i.log
  t bench $i; pack
done
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 20) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $O/bench_stamps.log 2>&1
echo "bench exit $?" >> $O/bench_stamps.log; t stamps; pack
$S/flashjit_gpu_tests "[sampling]" --list-test-names-only | grep -v '^$' | grep -vE '^(GPU tests: seed|engine: |[0-9]+ matching)' | sed 's/,.*$/*/' > $O/cases.txt
R=$(left 100)
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
timeout $(left 40) python3 tools/bench/torch_sampling.py > $O/torch_sampling.log 2>&1
echo "torch exit $?" >> $O/torch_sampling.log; t torch; pack
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 30) ncu --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,gpu__time_duration.sum -k regex:top_p --launch-count 1 $S/flashjit_bench_sampling --once --only "top_p0.9 B=64 V=128256 std1" --no-sweep > $O/ncu_b64.log 2>&1
echo "ncu exit $?" >> $O/ncu_b64.log; t ncu; pack
tail -n 2 $O/memcheck.log $O/racecheck.log
for f in $O/case_*.log; do grep -hE "^exit|test cases|All tests passed" "$f" | tr '\n' ' '; echo; done | cut -c1-120
grep -hE 'top_p0.9(_form|_push|_nocache|_form_nocache|_push_nocache)? B=(1|64) V=128256' $O/bench_top_p1.log $O/bench_top_p2.log | sed 's/  */ /g; s/TB\/s//g; s/TFLOP\/s//g' | cut -c1-130
grep -h "stamps" $O/bench_stamps.log | sed -E 's/.*(cand[-0-9]+[^:]*B=[0-9]+ V=[0-9]+ std[0-9]).*kernel ([0-9.]+ us).*fill d2 ([0-9]+).*fill d3 ([0-9]+).*/\1 \2 fd2 \3 fd3 \4/'
grep -E 'dram__bytes|hit_rate|lookup_hit|op_read.sum|duration' $O/ncu_b64.log | head
cat $L
