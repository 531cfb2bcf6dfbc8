#!/bin/bash
# Device call 1 for decode (session 7): the work-stealing persistent grid.
# bench, interleaved twice: auto (the session-6 default) / 0 (one CTA per unit) / 1 (static
# lists, forced) / 2 (work stealing, forced); torch_decode.py (cuDNN) in between; then the decode
# GPU cases (no compile allowed); racecheck and memcheck of the small stealing case.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s7; mkdir -p $L
cp docs/perf/logs/2026-11-30-s7-decode/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
b() { timeout 40 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for r in 1 2; do
    for m in auto 0 1 2; do sec "bench --persistent $m (run $r)"; b --persistent $m; done
    [ $r = 1 ] && { sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"; }
  done
} > $L/bench.log 2>&1
{ sec "decode GPU tests (no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 200 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
} > $L/tests.log 2>&1
{ sec racecheck
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: work-stealing grid, short units*" 2>&1 | tail -5
  echo "racecheck exit: ${PIPESTATUS[0]}"
  sec memcheck
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: work-stealing grid, short units*" "batch decode: a CUDA graph replays correctly on a forced work-stealing*" 2>&1 | tail -5
  echo "memcheck exit: ${PIPESTATUS[0]}"; sec done; } > $L/sanitizer.log 2>&1
tail -3 $L/tests.log; grep -E "FAILED|failed|s: batch" $L/tests.log | head -30
grep -E "exit|====" $L/bench.log | head -40
grep -E "exit|SUMMARY|====" $L/sanitizer.log
