#!/bin/bash
# Device run for decode (session 3, call 2): every decode GPU test on the committed kernel
# (head-major CTA order; call 1 lost its test log to the 8-file limit of the tool).
S=$PWD/build-decode-stage
export FLASHJIT_CACHE_DIR=$S/gpu-cache LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_DISABLE_JIT=1
L=${OUT:-/tmp}/s3b; mkdir -p $L
{ echo "==== device ($(date +%T))"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  echo "==== decode GPU tests (head-major; no compile allowed) ($(date +%T))"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 100 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
  echo "==== done ($(date +%T))"; } > $L/tests2.log 2>&1
cat $L/tests2.log
