#!/bin/bash
# Device run for decode (session 5): uniform splits merged by a thread-block cluster through
# distributed shared memory (new, default) against the global merge (FLASHJIT_DECODE_CLUSTER=0:
# partials in the workspace, fence, counter, last CTA reads them; same binary and cubins).
# Decode GPU tests, bench new / torch_decode.py (cuDNN) / old / new / old, A/B of chunk 512 on
# B=16 L=1k, ncu durations, memcheck, racecheck of the cluster case.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s5; mkdir -p $L
sec() { echo "==== $* ($(date +%T))"; }
new() { timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
old() { FLASHJIT_DECODE_CLUSTER=0 timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
SPLIT=1x1024,16x4096,16x16384,16x32768
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "decode GPU tests (no compile allowed)"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 120 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
} > $L/tests.log 2>&1
{ sec "bench new"; new; sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"
  sec "bench old (FLASHJIT_DECODE_CLUSTER=0)"; old; sec "bench new, again"; new; sec "bench old, again"; old
  sec "split shapes: new / old / new / old"; new --shapes $SPLIT; old --shapes $SPLIT; new --shapes $SPLIT; old --shapes $SPLIT
} > $L/bench.log 2>&1
{ sec "B=16 L=1k chunk 512: new (cluster of 2) / old (global merge) / default (unsplit)"
  for i in 1 2; do FLASHJIT_DECODE_CHUNK=512 new --shapes 16x1024; FLASHJIT_DECODE_CHUNK=512 old --shapes 16x1024; new --shapes 16x1024; done
} > $L/ab.log 2>&1
{ N="ncu --clock-control none -k regex:flashjit_decode --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__cycles_active.avg,launch__grid_size,launch__cluster_dim_x"
  sec "ncu new"; timeout 40 $N $S/flashjit_bench_decode --once --shapes 1x1024,16x4096
  sec "ncu old"; FLASHJIT_DECODE_CLUSTER=0 timeout 40 $N $S/flashjit_bench_decode --once --shapes 1x1024,16x4096
} > $L/ncu.log 2>&1
{ sec memcheck
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: uniform*,batch decode: dtypes*,batch decode: a CUDA graph*,single decode: dtypes*" 2>&1 | tail -6
  echo "memcheck exit: ${PIPESTATUS[0]}"
  sec racecheck
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: uniform*" 2>&1 | tail -6
  echo "racecheck exit: ${PIPESTATUS[0]}"; sec done; } > $L/sanitizer.log 2>&1
tail -4 $L/tests.log; grep -E "^decode|^single|exit|====" $L/bench.log; grep -E "cudnn" $L/bench.log | head -40
grep -E "^decode|====" $L/ab.log; grep -E "====|gpu__time|dram__|cluster_dim|grid_size|flashjit_decode" $L/ncu.log | head -40; grep -E "exit|SUMMARY|====" $L/sanitizer.log
