#!/usr/bin/env bash
# Session 28, call 3 (run2.sh): decode's own CTA rate under the read-only bench's placements:
# every request one chunk of 16384 keys (256 tiles a CTA), 1 CTA (4 q / 1 kv head), 8 (B=1),
# 128 (B=16: one an SM), 256 (B=32: two an SM on 124 SMs) and 264 CTAs (B=33), twice.
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
export FLASHJIT_DECODE_CHUNK=16384 FLASHJIT_DECODE_PERSISTENT=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
for r in 1 2; do
  build/tools/bench/flashjit_bench_decode --hq 4 --hkv 1 --shapes 1x16384 --plan
  build/tools/bench/flashjit_bench_decode --batches 1,16,32,33 --lengths 16384 --plan
done > $OUT/decode_lone.log 2>&1
grep -v "^plan" $OUT/decode_lone.log | cut -c1-160
