#!/bin/bash
# Device run for decode (session 2): tests, benchmark twice around the cuDNN baseline, sanitizers.
S=$PWD/build-decode-stage
export FLASHJIT_CACHE_DIR=$S/gpu-cache LD_LIBRARY_PATH=$S PYTHONUNBUFFERED=1
L=${OUT:-/tmp}/2026-11-29-s2-decode; mkdir -p $L
sec() { echo "==== $* ($(date +%T))"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $L/device.log 2>&1
{ sec "decode GPU tests (JIT disabled, no compile allowed)"
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 100 $S/flashjit_gpu_tests "[decode]" --durations yes
  echo "tests exit: $?"; } > $L/tests.log 2>&1
{ sec "bench decode (1)"; FLASHJIT_DISABLE_JIT=1 timeout 60 $S/flashjit_bench_decode; echo "exit $?"
  sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"
  sec "bench decode (2)"; FLASHJIT_DISABLE_JIT=1 timeout 60 $S/flashjit_bench_decode; echo "exit $?"; } > $L/bench.log 2>&1
{ sec memcheck
  FLASHJIT_DISABLE_JIT=1 timeout 40 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: fp8 KV*,batch decode: dtypes*,single decode: dtypes*" 2>&1 | tail -6
  echo "memcheck exit: ${PIPESTATUS[0]}"
  sec racecheck
  FLASHJIT_DISABLE_JIT=1 timeout 30 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: fp8 KV*" 2>&1 | tail -6
  echo "racecheck exit: ${PIPESTATUS[0]}"; } > $L/sanitizer.log 2>&1
tail -4 $L/tests.log; grep -E "^decode|^single|cudnn:group|exit" $L/bench.log | head -80; grep -E "SUMMARY|exit|passed|failed" $L/sanitizer.log
