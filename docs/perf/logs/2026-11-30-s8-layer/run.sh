#!/usr/bin/env bash
# Session 8 "layer" helper, the one H200 call (A/B of the shifted-sums LayerNorm, the norm launch
# bounds knob and the append's two-load index chain against the previous forms, in one call).
# Phase A (CPU-bound references, in parallel): every [norm] and [page] GPU case in its own process
# (JIT disabled, no compile), memcheck of a small case of each changed kernel, racecheck of the
# same (both use shared memory). Phase B, each alone on the GPU: bench_norm --sweep (with the
# driver copy row), bench_page, bench_rope, torch_layer_ops.py; then ncu metrics of the changed
# kernels (bench_norm --once --sweep: the LayerNorm and QK-norm sweep rows, launches 42-61; the append's default shapes with
# the old and the new form forced by FLASHJIT_PAGE_KERNEL; the RoPE defaults, for item 3).
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; L=/tmp/s8logs; mkdir -p $O $L
cp docs/perf/logs/2026-11-30-s8-layer/commit.txt $O/ 2>/dev/null
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $L/steps.txt; pack; }
pack() { (cd $L && tar czf $O/logs.tgz .); cp $L/steps.txt $O/ 2>/dev/null; }  # after every step
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; } > $L/device.txt 2>&1
export FLASHJIT_DISABLE_JIT=1
T=$S/flashjit_gpu_tests
$T --list-test-names-only "[norm],[page]" | grep -vE '^(GPU tests: seed|engine: )' | grep . > $L/cases.txt
[ -s $L/cases.txt ] || printf '%s\n' '[norm]' '[page]' > $L/cases.txt  # (listing failed: by tag)
run_case() {
  local f="$L/test-$(echo "$1" | tr -c 'A-Za-z0-9\n' _ | cut -c1-50).log"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 120 $T --durations yes "${1//,/\\,}" > "$f" 2>&1
  echo "exit $? $1"
}
export -f run_case; export T L
xargs -d '\n' -P 8 -I{} bash -c 'run_case "$1"' _ {} < $L/cases.txt > $L/tests-summary.txt 2>&1 &
tp=$!
SM="layernorm: large mean with small variance"
SP="append_paged_kv_cache: every kernel form\\, forced"
( timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 $T "$SM" > $L/memcheck-norm.log 2>&1; echo "memcheck norm $?"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 $T "$SM" > $L/racecheck-norm.log 2>&1; echo "racecheck norm $?" ) > $L/san1.txt &
s1=$!
( timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 $T "$SP" > $L/memcheck-page.log 2>&1; echo "memcheck page $?"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 $T "$SP" > $L/racecheck-page.log 2>&1; echo "racecheck page $?" ) > $L/san2.txt &
s2=$!
wait $tp $s1 $s2
cat $L/tests-summary.txt $L/san1.txt $L/san2.txt >> $L/steps.txt
st "tests: $(grep -c '^exit 0' $L/tests-summary.txt) of $(wc -l < $L/cases.txt) passed; $(cat $L/san1.txt $L/san2.txt | tr '\n' ' ')"
grep -h -E "^(PASS|FAIL)|test cases|assertions" $L/test-*.log | grep -vE "^\s*$" | sort | uniq | head -40 > $L/tests-brief.txt
OUT=$L timeout 90 stdbuf -oL $S/flashjit_bench_norm --sweep > $L/bench_norm.log 2>&1; st "bench_norm exit $?"
OUT=$L timeout 45 stdbuf -oL $S/flashjit_bench_page > $L/bench_page.log 2>&1; st "bench_page exit $?"
OUT=$L timeout 45 stdbuf -oL $S/flashjit_bench_rope > $L/bench_rope.log 2>&1; st "bench_rope exit $?"
timeout 60 python3 tools/bench/torch_layer_ops.py > $L/torch.log 2>&1; st "torch exit $?"
m=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
OUT= timeout 60 ncu --csv --metrics $m -k regex:flashjit_norm --launch-skip 42 -c 20 $S/flashjit_bench_norm --once --sweep > $L/ncu-norm.csv 2> $L/ncu-norm.err; st "ncu norm exit $?"
OUT= timeout 30 ncu --csv --metrics $m -k regex:rope -c 3 $S/flashjit_bench_rope --once > $L/ncu-rope.csv 2> $L/ncu-rope.err; st "ncu rope exit $?"
# (-c 4: the fifth default shape is the fp8 cache, whose form is not prewarmed in these two forms)
for f in tokens:128:2 chain:128:2; do
  FLASHJIT_PAGE_KERNEL=$f OUT= timeout 30 ncu --csv --metrics $m -k regex:append -c 4 $S/flashjit_bench_page --once > $L/ncu-page-${f%%:*}.csv 2> $L/ncu-page-${f%%:*}.err; st "ncu page $f exit $?"
done
pack; cp $L/tests-brief.txt $O/; cd $L
grep -E "8192x8192|16384x4096|16384x32|device_copy|copy" bench_norm.log | grep -E "default|copy|layernorm" | cut -c1-170 | head -30
grep -E "nnz 16384|copy" bench_page.log | grep -E "default|t128 i2|copy" | cut -c1-170 | head -20
