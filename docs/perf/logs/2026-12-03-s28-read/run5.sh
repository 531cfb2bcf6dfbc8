#!/usr/bin/env bash
# Session 28, call 6 (run5.sh): the persistent grid (cross-unit pipelining, static unit lists)
# forced against the default plans on the multi-wave shapes, where a CTA's start-up chain
# repeats every unit (B=256 L=1k: 7.76 units a slot), interleaved, three rounds.
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
S=256x1024,64x4096,64x1024,16x4096
for r in 1 2 3; do
  for m in auto 1; do
    echo "== round $r persistent $m"
    build/tools/bench/flashjit_bench_decode --shapes $S --persistent $m --plan
  done
done > $OUT/persistent.log 2>&1
grep "^==\|bf16" $OUT/persistent.log | cut -c1-160
