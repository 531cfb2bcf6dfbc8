#!/bin/bash
# Device call for PDL on the layer ops (session 9): flashjit_bench_pdl first (PDL off / on in
# adjacent rows, twice, via the test hook; synced and back-to-back), then the [norm], [rope],
# [activation], [page], [decode] and [pdl] GPU cases (one process per case, 8 at a time, JIT
# disabled, no compile allowed) beside compute-sanitizer memcheck of the small PDL chain.
S=$PWD/build-rope-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s9; mkdir -p $L
cp docs/perf/logs/2026-11-30-s9-pdl/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "bench pdl"; OUT= timeout 75 $S/flashjit_bench_pdl; echo "exit $?"; sec done; } > $L/bench.log 2>&1
{ sec "memcheck: pdl small chain"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 80 compute-sanitizer --tool memcheck --error-exitcode 3 \
    $S/flashjit_gpu_tests "pdl: small layer-op chain back to back" 2>&1 | tail -4
  echo "memcheck exit: ${PIPESTATUS[0]}"; sec done; } > $L/sanitizer.log 2>&1 &
{ sec "GPU tests (no compile allowed, one process per case, 8 at a time)"
  $S/flashjit_gpu_tests "[norm],[rope],[activation],[page],[decode],[pdl]" --list-test-names-only |
    grep -vE '^(GPU tests: seed|engine: )' | grep . > $L/names.txt
  wc -l < $L/names.txt
  mkdir -p $L/cases
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 80 $S/flashjit_gpu_tests --durations yes "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  slow='persistent grid over ragged|1 to 16k|every swept|mixed lengths|fp8 KV|16k tokens|dtypes and head dims|large'
  { grep -nE "$slow" $L/names.txt; grep -nvE "$slow" $L/names.txt; } | cut -d: -f1 |
    xargs -P 8 -I{} bash -c 'run_case {}'
  i=0; while read -r n; do i=$((i+1)); f=$L/cases/$i.log
    r=$(sed -n 's/^exit //p' $f); a=$(sed -n 's/^All tests passed (\([0-9]*\) assertion.*/\1/p' $f)
    c=$(sed -n 's/^engine: \([0-9]*\) compiles.*/\1/p' $f); d=$(grep -m1 -E '^[0-9.]+ s: ' $f | cut -d' ' -f1)
    if [ "$r" = 0 ] && [ -n "$a" ]; then echo "PASS ${d}s $a assertions compiles ${c:-?}  $n"; else echo "FAIL (exit $r)  $n"; tail -30 $f | sed 's/^/    | /'; fi
  done < $L/names.txt
  sec done
} > $L/tests.log 2>&1
wait
cd $L && tar czf cases.tgz cases names.txt && rm -rf cases names.txt
grep -c "^PASS" $L/tests.log; grep -E "^FAIL" $L/tests.log | head; grep -E "exit" $L/bench.log $L/sanitizer.log
grep -E "SUMMARY" $L/sanitizer.log
