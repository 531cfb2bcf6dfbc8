#!/usr/bin/env bash
# Session 28, call 5 (run4.sh): the read-only bench with a per-tile chain of dependent FMAs
# (0-2048 a tile) at 1 and 264 CTAs of 256 tiles, beside decode at the same placement (one
# chunk of 16384 keys a request: 1 CTA, and B=33 = 264 CTAs), in one call.
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
OUT=$OUT build/tools/bench/flashjit_bench_sm_read > $OUT/sm_read.log 2>&1
export FLASHJIT_DECODE_CHUNK=16384 FLASHJIT_DECODE_PERSISTENT=0
for r in 1 2; do
  build/tools/bench/flashjit_bench_decode --hq 4 --hkv 1 --shapes 1x16384
  build/tools/bench/flashjit_bench_decode --batches 33 --lengths 16384 --shapes 33x16384
done > $OUT/decode_lone.log 2>&1
grep "FMAs\|x 256 tiles" $OUT/sm_read.log | grep -v "tma\|6 stages" | cut -c1-175
grep "bf16" $OUT/decode_lone.log | cut -c1-160
