#!/usr/bin/env bash
# Session 28, call 7 (run6.sh): the read-only bench with a decode-like start-up (a record read
# before the page ids: two dependent round trips) and with the next wave's start-up readied in
# the L2 (evict-last prefetches one wave ahead), beside decode on the same shapes.
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
OUT=$OUT build/tools/bench/flashjit_bench_sm_read > $OUT/sm_read.log 2>&1
for r in 1 2; do
  build/tools/bench/flashjit_bench_decode --shapes 256x1024,64x4096,16x4096
done > $OUT/decode.log 2>&1
grep "records\|paged, 2048 CTAs\|paged, 512 CTAs\|paged, 256 CTAs x 32 " $OUT/sm_read.log | cut -c1-185
grep "bf16" $OUT/decode.log | cut -c1-160
