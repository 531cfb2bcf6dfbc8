#!/bin/bash
# Device call 1 for decode (session 6): the persistent grid with cross-unit pipelining.
# Decode GPU tests (no compile allowed), bench new (auto: persistent where units > resident CTAs)
# / torch_decode.py (cuDNN) / old (FLASHJIT_DECODE_PERSISTENT=0, one CTA per unit) / new /
# old, forced (=1) on the one-wave shapes, ncu-free; memcheck over [decode], racecheck of the
# new case.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s6; mkdir -p $L
cp docs/perf/logs/2026-11-30-s6-decode/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
b() { timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "decode GPU tests (no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 150 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
} > $L/tests.log 2>&1
{ sec "bench new (auto)"; b --persistent auto
  sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"
  sec "bench old (--persistent 0)"; b --persistent 0
  sec "bench new (auto), again"; b --persistent auto
  sec "bench old (--persistent 0), again"; b --persistent 0
} > $L/bench.log 2>&1
{ sec "forced (--persistent 1) / old on the one-wave shapes"
  F=1x1024,16x1024,16x4096,16x16384,16x32768,1x32768
  b --persistent 1 --shapes $F; b --persistent 0 --shapes $F
} > $L/ab.log 2>&1
{ sec racecheck
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: persistent grid*" 2>&1 | tail -5
  echo "racecheck exit: ${PIPESTATUS[0]}"
  sec memcheck
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "[decode]" 2>&1 | tail -5
  echo "memcheck exit: ${PIPESTATUS[0]}"; sec done; } > $L/sanitizer.log 2>&1
tail -4 $L/tests.log; grep -E "FAILED|failed" $L/tests.log | head -20
grep -E "^decode|^single|exit|====|cudnn" $L/bench.log | head -120
grep -E "^decode|====" $L/ab.log; grep -E "exit|SUMMARY|====" $L/sanitizer.log
