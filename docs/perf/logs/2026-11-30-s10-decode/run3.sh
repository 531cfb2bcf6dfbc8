#!/bin/bash
# Device call 3 for decode (session 10), the final tree: the stamps variant's small case (plain,
# racecheck, memcheck) and its ragged/graph case, a default decode case, and the stamps of the
# five diagnostic shapes with the record-read and griddepcontrol.wait marks.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=${OUT:-/tmp}/s10c; mkdir -p $L
cp docs/perf/logs/2026-11-30-s10-decode/commit3.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
t="batch decode: per-CTA stamps small"
{ sec "plain: $t"; timeout 30 $S/flashjit_gpu_tests "$t" 2>&1 | tail -2
  for tool in racecheck memcheck; do
    sec "$tool: $t"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$t" 2>&1 | tail -4
    echo "$tool exit: ${PIPESTATUS[0]}"
  done
  sec "batch decode: per-CTA stamps variant"; timeout 60 $S/flashjit_gpu_tests "batch decode: per-CTA stamps variant" 2>&1 | tail -3
  sec "batch decode: persistent grid over ragged batches"; timeout 80 $S/flashjit_gpu_tests "batch decode: persistent grid over ragged batches" 2>&1 | tail -3
  sec done; } > $L/tests.log 2>&1 &
tp=$!
wait $tp
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "stamps NHD default"; timeout 40 $S/flashjit_bench_decode --shapes 16x4096,64x1024,16x16384,256x1024,64x16384 --stamps $L/stamps.txt; echo "exit $?"
  sec done; } > $L/bench.log 2>&1
gzip $L/stamps.txt
grep -E "====|passed|failed|exit|SUMMARY" $L/tests.log
grep -E "^stamps .*alone|exit" $L/bench.log | cut -c1-260
