#!/bin/bash
# Device call for single decode through the cluster merge (session 5, lead's last call), commit
# a0f5354: decode GPU tests (no compile allowed); bench single L=1k/4k/16k/32k and batch B=1 L=1k,
# new / old (FLASHJIT_DECODE_CLUSTER=0) / new / old; racecheck of the cluster case and the knob-off
# run of it; memcheck of "single decode:*" in the time left. Stops by ~125 s.
S=$PWD/build-decode-stage
export FLASHJIT_CACHE_DIR=$S/gpu-cache LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1
L=${OUT:-/tmp}; T0=$SECONDS
sec() { echo "==== $* ($(date +%T), +$((SECONDS - T0)) s)"; }
left() { echo $((125 - (SECONDS - T0))); }
SH=s1024,s4096,s16384,s32768,1x1024
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "decode GPU tests (no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 75 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
  sec "cluster case with FLASHJIT_DECODE_CLUSTER=0 (expects the old path)"
  FLASHJIT_DECODE_CLUSTER=0 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 15 $S/flashjit_gpu_tests "single decode: uniform*"; echo "knob-off exit: $?"
} > $L/single-tests.log 2>&1
{ for r in 1 2; do
    sec "bench new ($r)"; timeout 12 $S/flashjit_bench_decode --shapes $SH; echo "exit $?"
    sec "bench old, FLASHJIT_DECODE_CLUSTER=0 ($r)"; FLASHJIT_DECODE_CLUSTER=0 timeout 12 $S/flashjit_bench_decode --shapes $SH; echo "exit $?"
  done; } > $L/single-bench.log 2>&1
{ sec racecheck; timeout $(left) compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "single decode: uniform*" 2>&1 | tail -3
  echo "racecheck exit: ${PIPESTATUS[0]}"
  sec memcheck; timeout $(left) compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "single decode:*" 2>&1 | tail -3
  echo "memcheck exit: ${PIPESTATUS[0]}"; sec done; } > $L/single-sanitizer.log 2>&1
tail -3 $L/single-tests.log; grep -E "exit|FAILED|passed|failed" $L/single-tests.log | head
grep -E "^(single_)?decode|exit|====" $L/single-bench.log; cat $L/single-sanitizer.log
