#!/usr/bin/env bash
# Session 8 round 2 "layer2" helper, one call: [rope] and [page] GPU cases (JIT disabled, no
# compile, one process per case) beside memcheck of the two forced-form cases (every swept RoPE
# row kernel incl. minb 0 / 10, every append form incl. minb 16); then bench_rope --ab and
# bench_page --ab (adjacent A/B rows, twice), each alone on the GPU.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
O=${OUT:-/tmp/out}; L=/tmp/l2logs; mkdir -p $O $L
cp docs/perf/logs/2026-11-30-s8-layer2/commit.txt $O/ 2>/dev/null
pack() { (cd $L && tar czf $O/logs.tgz .); cp $L/steps.txt $O/ 2>/dev/null; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $L/steps.txt; pack; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; } > $L/device.txt 2>&1
export FLASHJIT_DISABLE_JIT=1
T=$S/flashjit_gpu_tests
$T --list-test-names-only "[rope],[page]" | grep -vE '^(GPU tests: seed|engine: )' | grep . > $L/cases.txt
[ -s $L/cases.txt ] || printf '%s\n' '[rope]' '[page]' > $L/cases.txt
run_case() {
  local f="$L/test-$(echo "$1" | tr -c 'A-Za-z0-9\n' _ | cut -c1-50).log"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 75 $T --durations yes "${1//,/\\,}" > "$f" 2>&1
  echo "exit $? $1"
}
export -f run_case; export T L
xargs -d '\n' -P 8 -I{} bash -c 'run_case "$1"' _ {} < $L/cases.txt > $L/tests-summary.txt 2>&1 &
tp=$!
( timeout 70 compute-sanitizer --tool memcheck --error-exitcode 3 $T "rope: every swept kernel configuration" > $L/memcheck-rope.log 2>&1; echo "memcheck rope $?" ) > $L/san1.txt &
s1=$!
( timeout 70 compute-sanitizer --tool memcheck --error-exitcode 3 $T "append_paged_kv_cache: every kernel form\, forced" > $L/memcheck-page.log 2>&1; echo "memcheck page $?" ) > $L/san2.txt &
s2=$!
wait $tp $s1 $s2
cat $L/tests-summary.txt $L/san1.txt $L/san2.txt >> $L/steps.txt
st "tests: $(grep -c '^exit 0' $L/tests-summary.txt) of $(wc -l < $L/cases.txt) passed; $(cat $L/san1.txt $L/san2.txt | tr '\n' ' ')"
grep -h "engine:" $L/test-*.log | sort | uniq -c >> $L/steps.txt
timeout 25 stdbuf -oL $S/flashjit_bench_rope --ab > $L/bench_rope_ab.log 2>&1; st "bench_rope --ab exit $?"
timeout 15 stdbuf -oL $S/flashjit_bench_page --ab > $L/bench_page_ab.log 2>&1; st "bench_page --ab exit $?"
cd $L
grep -E "nnz|copy" bench_rope_ab.log | awk '{$1=$1;print}' | cut -c1-140
grep -E "nnz|copy" bench_page_ab.log | awk '{$1=$1;print}' | cut -c1-140
