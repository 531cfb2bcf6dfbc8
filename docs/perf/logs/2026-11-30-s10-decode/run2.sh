#!/bin/bash
# Device call 2 for decode (session 10): the L2 evict-first form with its policy as a constant.
# Its small case first (plain, then racecheck / memcheck), the stamps of the five diagnostic
# shapes with it, bench_decode A = default / C = --l2-hint 1 over every bf16 B x L shape and the
# fp8 rows interleaved twice (A C C A), then the decode GPU cases (no compile allowed, one process
# per case, 8 at a time).
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s10b; mkdir -p $L
cp docs/perf/logs/2026-11-30-s10-decode/commit2.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
t="*L2 evict-first and stamps small"
{ sec "plain: $t"; FLASHJIT_EXPECT_NO_COMPILE=1 timeout 30 $S/flashjit_gpu_tests "$t" 2>&1 | tail -3
  for tool in racecheck memcheck; do
    sec "$tool: $t"
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$t" 2>&1 | tail -12
    echo "$tool exit: ${PIPESTATUS[0]}"
  done; sec done; } > $L/sanitizer.log 2>&1
b() { timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
five=16x4096,64x1024,16x16384,256x1024,64x16384
all=1x1024,1x4096,1x16384,1x32768,16x1024,16x4096,16x16384,16x32768,64x1024,64x4096,64x16384,64x32768,256x1024,256x4096,256x16384,256x32768,e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "stamps NHD L2 evict-first"; b --shapes $five --stamps $L/stamps-l2.txt --l2-hint 1
  sec "stamps NHD default"; b --shapes $five --stamps $L/stamps-nhd.txt
  sec "bench A default (run 1)"; b --shapes $all
  sec "bench C L2 evict-first (run 1)"; b --shapes $all --l2-hint 1
  sec "bench C L2 evict-first (run 2)"; b --shapes $all --l2-hint 1
  sec "bench A default (run 2)"; b --shapes $all
  sec done
} > $L/bench.log 2>&1
{ sec "decode GPU tests (no compile allowed, one process per case, 8 at a time, longest first)"
  $S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -E "^(batch|single) decode" > $L/names.txt
  wc -l < $L/names.txt
  mkdir -p $L/cases
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 150 $S/flashjit_gpu_tests --durations yes "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  slow='programmatic dependent launch over|persistent grid over ragged|L2 evict-first K/V|mixed lengths|fp8 KV|clusters of up to 16'
  { grep -nE "$slow" $L/names.txt; grep -nvE "$slow" $L/names.txt; } | cut -d: -f1 | xargs -P 8 -I{} bash -c 'run_case {}'
  for f in $(ls $L/cases/*.log | sort -V); do echo "-- $(basename $f): $(sed -n "$(basename $f .log)p" $L/names.txt)"; grep -E "passed|failed|FAILED|exit|s: " $f | tail -4; done
  sec done
} > $L/tests.log 2>&1
cd $L && tar czf raw.tgz cases names.txt stamps-*.txt && rm -rf cases stamps-*.txt
grep -cE "^exit 0" $L/tests.log; grep -E "FAILED|exit [1-9]" $L/tests.log | head -20
grep -E "exit [1-9]|====" $L/bench.log | head -40
grep -E "exit|SUMMARY|====|passed|failed" $L/sanitizer.log
