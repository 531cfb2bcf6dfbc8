#!/bin/bash
# Device run for decode (session 4): the shared-offsets loader + skipped O rescale + lone-CTA plan
# cost (new) against the tree before it (old: its bench binary and kernels in build-decode-old)
# and the loader alone (mid: new loader, O rescale every step, new plan; build-decode-mid).
# Decode GPU tests, bench new / torch_decode.py (cuDNN) / old / new / old in one call, memcheck,
# A/B of plan / depth / chunk, ncu metrics, racecheck of the graph case.
S=$PWD/build-decode-stage O=$PWD/build-decode-old M=$PWD/build-decode-mid
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
L=${OUT:-/tmp}/s4; mkdir -p $L
sec() { echo "==== $* ($(date +%T))"; }
new() { FLASHJIT_CACHE_DIR=$S/gpu-cache timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
old() { FLASHJIT_CACHE_DIR=$O/gpu-cache timeout 60 $O/flashjit_bench_decode "$@"; echo "exit $?"; }
mid() { FLASHJIT_CACHE_DIR=$M/gpu-cache timeout 60 $M/flashjit_bench_decode "$@"; echo "exit $?"; }
SHORT=1x1024,16x1024,16x4096,64x1024,64x4096
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "decode GPU tests (new; no compile allowed)"
  FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1 timeout 100 $S/flashjit_gpu_tests "[decode]" --durations yes; echo "tests exit: $?"
} > $L/tests.log 2>&1
{ sec "bench new"; new; sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"
  sec "bench old"; old; sec "bench new, again"; new; sec "bench old, again"; old; } > $L/bench.log 2>&1
{ sec memcheck
  FLASHJIT_CACHE_DIR=$S/gpu-cache timeout 80 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: dtypes*,batch decode: a CUDA graph*,single decode: dtypes*" 2>&1 | tail -6
  echo "memcheck exit: ${PIPESTATUS[0]}"; } > $L/sanitizer.log 2>&1
{ sec "mid (loader only)"; mid --shapes $SHORT,64x32768
  sec "new, chunk 512"; FLASHJIT_DECODE_CHUNK=512 new --shapes 16x1024
  sec "old, chunk 1024"; FLASHJIT_DECODE_CHUNK=1024 old --shapes 16x1024
  for st in 2 4; do sec "new, stages $st"; FLASHJIT_DECODE_STAGES=$st new --shapes $SHORT; done
  for c in 256 512 1024 2048 4096; do sec "new, chunk $c"; FLASHJIT_DECODE_CHUNK=$c new --shapes $SHORT; done
} > $L/ab.log 2>&1
{ N="ncu --clock-control none -k regex:flashjit_decode --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,launch__registers_per_thread,launch__grid_size"
  sec "ncu new"; FLASHJIT_CACHE_DIR=$S/gpu-cache timeout 40 $N $S/flashjit_bench_decode --once --shapes 16x1024,64x4096
  sec "ncu old"; FLASHJIT_CACHE_DIR=$O/gpu-cache timeout 40 $N $O/flashjit_bench_decode --once --shapes 16x1024,64x4096
} > $L/ncu.log 2>&1
{ sec racecheck
  FLASHJIT_CACHE_DIR=$S/gpu-cache timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: a CUDA graph*" 2>&1 | tail -6
  echo "racecheck exit: ${PIPESTATUS[0]}"; sec done; } >> $L/sanitizer.log 2>&1
tail -4 $L/tests.log; grep -E "^decode|^single|exit|====" $L/bench.log; grep -E "cudnn:enable_gqa" $L/bench.log | head -16
grep -E "^decode|====" $L/ab.log; grep -E "exit|SUMMARY|====" $L/sanitizer.log
