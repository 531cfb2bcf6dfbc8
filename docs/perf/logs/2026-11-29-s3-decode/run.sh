#!/bin/bash
# Device run for decode (session 3, call 1): ncu of the kernel in the old (item-major) and the new
# (head-major) CTA order, the decode GPU tests, an A/B of CTA order / pipeline depth / chunk, the
# benchmark beside cuDNN (torch_decode.py) in the same call, memcheck.
S=$PWD/build-decode-stage
export FLASHJIT_CACHE_DIR=$S/gpu-cache LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1
L=${OUT:-/tmp}/s3; mkdir -p $L
sec() { echo "==== $* ($(date +%T))"; }
B="timeout 60 $S/flashjit_bench_decode"
export FLASHJIT_DISABLE_JIT=1
SHORT=16x1024,16x4096,64x1024,64x4096
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "decode GPU tests (head-major, default stages; no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 100 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
  sec "decode GPU tests, 6 stages (1 CTA per SM)"
  FLASHJIT_DECODE_STAGES=6 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 $S/flashjit_gpu_tests "batch decode: mixed*,batch decode: dtypes*,batch decode: a CUDA graph*" --durations yes; echo "tests exit: $?"
} > $L/tests.log 2>&1
{ sec "bench decode, new default (head-major)"; $B; echo "exit $?"
  sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"
  sec "bench decode, old order (item-major)"; FLASHJIT_DECODE_ORDER=item $B; echo "exit $?"
  sec "bench decode, new default, again"; $B; echo "exit $?"; } > $L/bench.log 2>&1
{ for st in 2 4 5 6; do sec "stages $st"; FLASHJIT_DECODE_STAGES=$st $B --shapes $SHORT,256x1024,16x32768,64x32768,e4m3:64x4096,e4m3:256x1024; done
  for c in 256 512 1024 2048 4096; do sec "stages 3 chunk $c"; FLASHJIT_DECODE_CHUNK=$c $B --shapes $SHORT; done
  for c in 512 1024 2048 4096; do sec "stages 6 chunk $c"; FLASHJIT_DECODE_STAGES=6 FLASHJIT_DECODE_CHUNK=$c $B --shapes $SHORT; done
} > $L/ab.log 2>&1
{ N="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats -k regex:flashjit_decode"
  sec "ncu item-major"; FLASHJIT_DECODE_ORDER=item timeout 60 $N -o $L/ncu-item $S/flashjit_bench_decode --once --shapes 16x1024,64x4096,64x32768 | tail -3
  sec "ncu head-major"; timeout 60 $N -o $L/ncu-head $S/flashjit_bench_decode --once --shapes 16x1024,64x4096,64x32768 | tail -3
  for r in item head; do sec "ncu $r details"; ncu --import $L/ncu-$r.ncu-rep --page details; done
} > $L/ncu.log 2>&1
{ sec memcheck
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: dtypes*,batch decode: a CUDA graph*,single decode: dtypes*" 2>&1 | tail -6
  echo "memcheck exit: ${PIPESTATUS[0]}"; } > $L/sanitizer.log 2>&1
tail -3 $L/tests.log; grep -E "^decode|^single|cudnn|exit|====" $L/bench.log; grep -E "^decode|====" $L/ab.log; grep -E "exit|SUMMARY" $L/sanitizer.log; grep -E "====|Duration|DRAM Throughput|Memory Throughput" $L/ncu.log | head -60
