#!/usr/bin/env bash
# Session 29, call 2: the plan knobs again on the shapes furthest from cuDNN (one-wave plans), on
# HEAD's kernels (build-stage: the bench and cache of call 1). Host-side knobs only; JIT is allowed
# for variants the staged cache lacks (compiles are reported). Three rounds in rotating order,
# then the default's stamps at B=16 L=1k and L=4k.
set -u
[ -d build-stage ] || tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage
cp -a build-stage/gpu-cache /tmp/cache && export FLASHJIT_CACHE_DIR=/tmp/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
B=build-stage/flashjit_bench_decode
S="--shapes 16x1024,16x4096,64x1024,1x32768,256x1024 --plan"
knobs=("X=0" "FLASHJIT_DECODE_CLUSTER=0" "FLASHJIT_DECODE_CLUSTER=0 FLASHJIT_DECODE_STEAL=auto"
       "FLASHJIT_DECODE_CLUSTER=0 FLASHJIT_DECODE_STEAL=1" "FLASHJIT_DECODE_ORDER=item"
       "FLASHJIT_DECODE_PDL=0" "FLASHJIT_DECODE_CHUNK=512" "FLASHJIT_DECODE_CHUNK=2048"
       "FLASHJIT_DECODE_PERSISTENT=1")
start=$SECONDS
for r in 1 2 3; do
  n=${#knobs[@]}
  for ((k = 0; k < n; k++)); do
    env=${knobs[$(((k + r - 1) % n))]}
    [ $((SECONDS - start)) -gt 420 ] && break 2
    echo "== round $r $env"
    env $env timeout 60 $B $S
  done
done > $OUT/knobs.log 2>&1
grep "^==\|^decode" $OUT/knobs.log | cut -c1-175
$B --shapes 16x1024,16x4096,64x1024 --stamps $OUT/stamps.txt > $OUT/stamps.log 2>&1
grep "^stamps.*alone" $OUT/stamps.log | cut -c1-260
echo "total $((SECONDS - start)) s"
