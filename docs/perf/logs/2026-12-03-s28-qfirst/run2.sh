#!/usr/bin/env bash
# Session 28, call 11 (run2.sh): multi-wave plans on the persistent entry with a few units a CTA
# (FLASHJIT_DECODE_UNITS_PER_CTA=N: ceil(units / N) CTAs, later ones as later waves), so that a
# CTA's start-up and epilogue overlap its next unit's copies. Default / persistent on the
# resident CTAs / 2 / 4 units a CTA, two rounds interleaved; then the persistent GPU cases with 2
# units a CTA (grids past the resident CTAs).
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
S=256x1024,256x4096,64x4096,64x1024,16x4096
for r in 1 2; do
  for m in "X=0" "FLASHJIT_DECODE_PERSISTENT=1" "FLASHJIT_DECODE_PERSISTENT=1 FLASHJIT_DECODE_UNITS_PER_CTA=2" "FLASHJIT_DECODE_PERSISTENT=1 FLASHJIT_DECODE_UNITS_PER_CTA=4"; do
    echo "== round $r $m"
    env $m build/tools/bench/flashjit_bench_decode --shapes $S
  done
done > $OUT/units.log 2>&1
for c in "batch decode: persistent grid over ragged batches" "batch decode: persistent grid\, short units and merges" "batch decode: a CUDA graph replays correctly on a forced persistent grid"; do
  FLASHJIT_DECODE_UNITS_PER_CTA=2 timeout 200 build/tests/flashjit_gpu_tests "$c" 2>&1 | tail -2
done > $OUT/tests.log 2>&1
cat $OUT/tests.log
grep "^==\|bf16 B=" $OUT/units.log | sed -E "s/ +/ /g; s/(us|TB\/s) 0.0 TFLOP\/s stages 3 \|//" | cut -c1-120
