#!/usr/bin/env bash
# Session 28, call 8 (run7.sh): fp8 (e4m3) decode at head dim 64 reads 2.9-3.4 TB/s, and less
# at B=128 than at B=64 (session 23). Its plans under the tuning knobs, interleaved, two rounds:
# the default (tail pieces), no tail pieces, chunks of 8192 keys (a larger workspace), 3 CTAs
# an SM; and head dim 128 (base) default against no tail pieces.
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
B="--kv e4m3 --batches 64,128 --lengths 16384,32768 --max-batch 256 --plan"
for r in 1 2; do
  for env in "X=0" "FLASHJIT_DECODE_TAIL=0" "FLASHJIT_DECODE_CHUNK=8192" "FLASHJIT_DECODE_CTAS_PER_SM=3"; do
    echo "== round $r d64 $env"
    env $env build/tools/bench/flashjit_bench_decode --configs d64 $B
  done
  for env in "X=0" "FLASHJIT_DECODE_TAIL=0"; do
    echo "== round $r base $env"
    env $env build/tools/bench/flashjit_bench_decode --configs base $B
  done
done > $OUT/fp8_plans.log 2>&1
grep "^==\|e4m3kv B=" $OUT/fp8_plans.log | grep -v "^plan" | cut -c1-140
