#!/usr/bin/env bash
# Session 29, call 7: where the 8-warp CTA's start goes. build-st: warp-groups.patch with the
# stamps' 'issued' mark moved to right after tile 0's copies are issued (stamps-issued.patch).
# Stamps at B=16 L=1k (128 CTAs of 16 tiles) for the 8-warp form (6 stages), and the 4-warp form
# at 6 and 3 stages, no clusters; two rounds. JIT allowed (the untimed variants compile here).
set -u
export FLASHJIT_ARCH=sm_90a FLASHJIT_CACHE_DIR=$PWD/build-st/gpu-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
B=build-st/flashjit_bench_decode
for r in 1 2; do
  for env in "FLASHJIT_DECODE_WARP_GROUPS=2" "FLASHJIT_DECODE_CLUSTER=0 FLASHJIT_DECODE_STAGES=6" \
             "FLASHJIT_DECODE_CLUSTER=0"; do
    echo "== round $r $env"
    env $env timeout 90 $B --shapes 16x1024,16x4096 --plan --stamps $OUT/stamps.txt
  done
done > $OUT/stamps.log 2>&1
grep "^==\|^stamps.*alone\|^decode" $OUT/stamps.log | cut -c1-240
gzip $OUT/stamps.txt
