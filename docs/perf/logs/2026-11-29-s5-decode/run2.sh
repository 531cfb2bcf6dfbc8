#!/bin/bash
# Device run 2 for decode (session 5), final tree (commit 92e19db + docs): the cluster merge
# limited to 16-bit KV at D 128 and priced 0.5 (B=16 L=1k now split in two, clusters of 2).
# Decode GPU tests, bench new / torch_decode.py (cuDNN) / old (FLASHJIT_DECODE_CLUSTER=0) / new,
# A/B: B=16 L=1k unsplit vs the new plan; fp8 with clusters (=all) at the plan's chunk (clusters
# of 3) and at chunk 2048 (clusters of 2); memcheck of the cluster case.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s5b; mkdir -p $L
sec() { echo "==== $* ($(date +%T))"; }
new() { timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
old() { FLASHJIT_DECODE_CLUSTER=0 timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "decode GPU tests (no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 120 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
} > $L/tests.log 2>&1
{ sec "bench new"; new; sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"
  sec "bench old (FLASHJIT_DECODE_CLUSTER=0)"; old; sec "bench new, again"; new
} > $L/bench.log 2>&1
{ sec "B=16 L=1k: new plan (chunk 512, clusters of 2) / unsplit (chunk 1024)"
  for i in 1 2; do new --shapes 16x1024; FLASHJIT_DECODE_CHUNK=1024 new --shapes 16x1024; done
  sec "fp8: default (global merge) / clusters at the plan's chunk (3 per request) / chunk 2048 global / chunk 2048 clusters of 2"
  F=e4m3:16x4096,e4m3:64x4096
  new --shapes $F; FLASHJIT_DECODE_CLUSTER=all new --shapes $F
  FLASHJIT_DECODE_CHUNK=2048 new --shapes $F; FLASHJIT_DECODE_CHUNK=2048 FLASHJIT_DECODE_CLUSTER=all new --shapes $F
} > $L/ab.log 2>&1
{ sec memcheck
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: uniform*" 2>&1 | tail -4
  echo "memcheck exit: ${PIPESTATUS[0]}"; sec done; } > $L/sanitizer.log 2>&1
tail -4 $L/tests.log; grep -E "^decode|^single|exit|====" $L/bench.log; grep -E "cudnn" $L/bench.log
grep -E "^decode|====" $L/ab.log; grep -E "exit|SUMMARY|====" $L/sanitizer.log
