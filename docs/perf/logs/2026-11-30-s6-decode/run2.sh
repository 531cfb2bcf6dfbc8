#!/bin/bash
# Device call 2 for decode (session 6), commit 3673d88 (default rule narrowed, graph mode off
# unless forced; kernels byte-identical to call 1): racecheck of the small persistent case,
# the persistent cases, graph and knobs cases (no compile), and the new default against
# --persistent 0 on the shapes the rule decides.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s6b; mkdir -p $L
cp docs/perf/logs/2026-11-30-s6-decode/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
{ sec racecheck
  timeout 30 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: persistent grid, short*" 2>&1 | tail -6
  echo "racecheck exit: ${PIPESTATUS[0]}"
  sec "decode GPU cases (no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 20 $S/flashjit_gpu_tests "batch decode: persistent grid, short*,*CUDA graph*,batch decode: dtypes*,batch decode: uniform*" --durations yes 2>&1 | tail -9
  echo "tests exit: ${PIPESTATUS[0]}"
  sec "bench default / --persistent 0, twice"
  for i in 1 2; do for m in auto 0; do echo "-- $m"; timeout 6 $S/flashjit_bench_decode --persistent $m --shapes 64x1024,64x4096,256x1024 | grep ^decode; done; done
  sec done; } > $L/run2.log 2>&1
cat $L/run2.log
