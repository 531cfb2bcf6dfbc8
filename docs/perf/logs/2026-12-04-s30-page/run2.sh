#!/usr/bin/env bash
# Session 30, call 2 (call 1 ran out of time before its A/B): the decode bench A (default: page
# size compiled in) / B (FLASHJIT_DECODE_FIXED_PAGE=0: read at run time, the kernels before this
# session) interleaved A B B A A B B A, the production configurations A B B A (B compiles its
# variants on the device: not timed), then PyTorch's cuDNN SDPA on the same shapes.
echo "$1" > "$OUT/commit.txt"
[ -x build-stage/flashjit_bench_decode ] || tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache
start=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for r in A B B A A B B A; do
  echo "==== $r ($(date +%T))"
  if [ $r = A ]; then
    FLASHJIT_DISABLE_JIT=1 timeout 40 build-stage/flashjit_bench_decode
  else
    FLASHJIT_DISABLE_JIT=1 FLASHJIT_DECODE_FIXED_PAGE=0 timeout 40 build-stage/flashjit_bench_decode
  fi
done > "$OUT/ab.log" 2>&1
echo "ab: $((SECONDS - start)) s"
cfg=base,tp8,tp4,qwen7b,gemma2,mha,d64,page1,page64,f16
for r in A B B A; do
  [ $((SECONDS - start)) -gt 400 ] && break
  echo "==== $r ($(date +%T))"
  if [ $r = A ]; then
    FLASHJIT_DISABLE_JIT=1 timeout 60 build-stage/flashjit_bench_decode --configs $cfg
  else
    FLASHJIT_DECODE_FIXED_PAGE=0 timeout 90 build-stage/flashjit_bench_decode --configs $cfg
  fi
done > "$OUT/ab_configs.log" 2>&1
echo "configs: $((SECONDS - start)) s"
timeout 120 python3 tools/bench/torch_decode.py > "$OUT/torch_decode.log" 2>&1
echo "total: $((SECONDS - start)) s"
