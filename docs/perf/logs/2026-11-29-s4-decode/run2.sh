#!/bin/bash
# Device run for decode (session 4, call 2): the final tree (the kernel as before session 4, the
# plan's lone-CTA tile cost): the batch decode GPU cases whose plans the cost changes (16-bit KV,
# D 128; single decode and fp8 plan as before), the benchmark, its short shapes again.
S=$PWD/build-decode-stage
export FLASHJIT_CACHE_DIR=$S/gpu-cache LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_DISABLE_JIT=1
L=${OUT:-/tmp}/s4b; mkdir -p $L
sec() { echo "==== $* ($(date +%T))"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "batch decode GPU tests (final tree; no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 45 $S/flashjit_gpu_tests "batch decode: mixed*,batch decode: dtypes*,batch decode: a CUDA graph*" --durations yes; echo "tests exit: $?"
  sec "bench (final tree)"; timeout 30 $S/flashjit_bench_decode; echo "exit $?"
  sec "bench short shapes, again"; timeout 20 $S/flashjit_bench_decode --shapes 16x1024,16x4096,64x1024; echo "exit $?"
  sec done; } > $L/final.log 2>&1
cat $L/final.log
