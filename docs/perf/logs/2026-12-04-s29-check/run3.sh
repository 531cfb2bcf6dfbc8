#!/usr/bin/env bash
# Session 29, call 3: the ring's depth again (FLASHJIT_DECODE_STAGES 2 / 4 / 6 against the
# default 3) on the shapes whose plans leave one CTA an SM or one wave, HEAD's kernels
# (build-stage), JIT allowed for the depths the staged cache lacks. Two rounds, rotating.
set -u
[ -d build-stage ] || tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage
cp -a build-stage/gpu-cache /tmp/cache && export FLASHJIT_CACHE_DIR=/tmp/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
B=build-stage/flashjit_bench_decode
S="--shapes 1x4096,1x16384,1x32768,16x1024,16x4096,64x1024,16x16384 --plan"
knobs=("X=0" "FLASHJIT_DECODE_STAGES=2" "FLASHJIT_DECODE_STAGES=4" "FLASHJIT_DECODE_STAGES=6")
for r in 1 2; do
  for ((k = 0; k < 4; k++)); do
    env=${knobs[$(((k + r - 1) % 4))]}
    echo "== round $r $env"
    env $env timeout 90 $B $S
  done
done > $OUT/knobs.log 2>&1
grep "^==\|^decode\|compile" $OUT/knobs.log | cut -c1-175
