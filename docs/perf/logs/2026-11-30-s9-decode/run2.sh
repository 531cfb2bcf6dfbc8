#!/bin/bash
# Device call 2 for decode (session 9): the default with programmatic dependent launch on for
# launches whose items have <= 4096 keys (2e38feb). bench default ("auto") against
# FLASHJIT_DECODE_PDL=0, interleaved twice; the decode GPU cases under the default (no compile
# allowed, one process per case); racecheck / memcheck of a small default-path case.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s9b; mkdir -p $L
cp docs/perf/logs/2026-11-30-s9-decode/commit2.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
b() { timeout 45 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for r in 1 2; do
    sec "bench auto (run $r)"; b
    sec "bench PDL 0 (run $r)"; FLASHJIT_DECODE_PDL=0 b
  done; sec done; } > $L/bench.log 2>&1
{ sec "decode GPU tests (no compile allowed, one process per case, 8 at a time)"
  $S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -E "^(batch|single) decode" > $L/names.txt
  wc -l < $L/names.txt
  mkdir -p $L/cases
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 120 $S/flashjit_gpu_tests --durations yes "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  seq 1 $(wc -l < $L/names.txt) | xargs -P 8 -I{} bash -c 'run_case {}'
  for f in $(ls $L/cases/*.log | sort -V); do echo "-- $(basename $f): $(sed -n "$(basename $f .log)p" $L/names.txt)"; grep -E "passed|failed|FAILED|exit|s: " $f | tail -4; done
  sec done
} > $L/tests.log 2>&1
{ t="batch decode: persistent grid\, short units and merges"
  for tool in racecheck memcheck; do
    sec "$tool: $t"
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 40 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$t" 2>&1 | tail -4
    echo "$tool exit: ${PIPESTATUS[0]}"
  done; sec done; } > $L/sanitizer.log 2>&1
cd $L && tar czf cases.tgz cases names.txt && rm -rf cases
grep -cE "^exit 0" $L/tests.log; grep -E "FAILED|exit [1-9]" $L/tests.log | head -20
grep -E "exit [1-9]|====" $L/bench.log
grep -E "exit|SUMMARY|====" $L/sanitizer.log
