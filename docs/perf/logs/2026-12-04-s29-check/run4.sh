#!/usr/bin/env bash
# Session 29, call 4: is B=16 L=1k's default plan (128 CTAs of 16 tiles, one an SM) held by
# decode's own chain or by the memory system at that concurrency? The light reading kernel
# (bench_sm_read --lone: 3 / 6 stages, paged, with 0 / 256 / 512 dependent FMAs after each
# tile) beside decode's default at the same shape, interleaved, three rounds.
set -u
[ -d build-stage ] || tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
for r in 1 2 3; do
  echo "== round $r decode"
  timeout 60 build-stage/flashjit_bench_decode --shapes 16x1024,16x4096 --plan
  echo "== round $r sm_read"
  timeout 120 build-c/flashjit_bench_sm_read --lone
done > $OUT/lone.log 2>&1
grep "^==\|^decode\|^sm_read" $OUT/lone.log | grep -v "round [23])" | cut -c1-230
