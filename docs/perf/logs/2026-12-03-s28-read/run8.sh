#!/usr/bin/env bash
# Session 28, call 9 (run8.sh): per-CTA stamps (entry, first tile landed, end, SM) of the
# reading kernel's rows and of decode (its stamps variant) at B=256 L=1k, B=64 L=4k, B=16 L=4k,
# to see where decode's CTA starts cost what the reading kernel's do not.
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
mkdir -p $OUT/st
FLASHJIT_SM_READ_STAMPS=$OUT/st OUT=$OUT build/tools/bench/flashjit_bench_sm_read > $OUT/sm_read.log 2>&1
build/tools/bench/flashjit_bench_decode --shapes 256x1024,64x4096,16x4096 --stamps $OUT/st/decode-stamps.txt > $OUT/decode.log 2>&1
cd $OUT && tar czf stamps.tgz st && rm -rf st
grep "^stamps\|bf16" $OUT/decode.log | cut -c1-250
grep "paged, 2048\|paged, 512\|paged, 256 CTAs x 32 " $OUT/sm_read.log | cut -c1-150
