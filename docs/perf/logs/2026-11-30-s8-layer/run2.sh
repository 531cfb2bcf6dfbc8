#!/usr/bin/env bash
# Session 8 "layer" helper, call 2 (the final tree's defaults): the launch-bounds knob's "no
# minimum" now emits no minimum (call 1's minimum of 1 had raised the registers of every default
# norm kernel); the append's two-load chain reverted. [norm] and [page] GPU cases (JIT disabled,
# no compile) with memcheck and racecheck of the LayerNorm case beside them; then bench_norm
# --sweep (adjacent A/B rows) and bench_page, each alone on the GPU.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; L=/tmp/s8logs2; mkdir -p $O $L
cp docs/perf/logs/2026-11-30-s8-layer/commit2.txt $O/ 2>/dev/null
pack() { (cd $L && tar czf $O/logs2.tgz .); cp $L/steps.txt $O/ 2>/dev/null; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $L/steps.txt; pack; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; } > $L/device.txt 2>&1
export FLASHJIT_DISABLE_JIT=1
T=$S/flashjit_gpu_tests
$T --list-test-names-only "[norm],[page]" | grep -vE '^(GPU tests: seed|engine: )' | grep . > $L/cases.txt
[ -s $L/cases.txt ] || printf '%s\n' '[norm]' '[page]' > $L/cases.txt
run_case() {
  local f="$L/test-$(echo "$1" | tr -c 'A-Za-z0-9\n' _ | cut -c1-50).log"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 100 $T --durations yes "${1//,/\\,}" > "$f" 2>&1
  echo "exit $? $1"
}
export -f run_case; export T L
xargs -d '\n' -P 8 -I{} bash -c 'run_case "$1"' _ {} < $L/cases.txt > $L/tests-summary.txt 2>&1 &
tp=$!
SM="layernorm: large mean with small variance"
( timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 $T "$SM" > $L/memcheck-norm.log 2>&1; echo "memcheck norm $?"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 $T "$SM" > $L/racecheck-norm.log 2>&1; echo "racecheck norm $?" ) > $L/san1.txt &
s1=$!
wait $tp $s1
cat $L/tests-summary.txt $L/san1.txt >> $L/steps.txt
st "tests: $(grep -c '^exit 0' $L/tests-summary.txt) of $(wc -l < $L/cases.txt) passed; $(cat $L/san1.txt | tr '\n' ' ')"
grep -h "engine:" $L/test-*.log | sort | uniq -c >> $L/steps.txt
OUT=$L timeout 60 stdbuf -oL $S/flashjit_bench_norm --sweep > $L/bench_norm.log 2>&1; st "bench_norm exit $?"
OUT=$L timeout 40 stdbuf -oL $S/flashjit_bench_page > $L/bench_page.log 2>&1; st "bench_page exit $?"
cd $L
grep -E "8192x8192|16384x4096|16384x32|copy" bench_norm.log | grep -E "default|copy|layernorm|t128 r1 i4|t4 r|t128 r1 i8" | awk '{$1=$1;print}' | sed 's/ 0.0 TFLOP\/s//' | cut -c1-130 | tail -40
grep -E "nnz 16384 .*default|copy" bench_page.log | awk '{$1=$1;print}' | cut -c1-150
