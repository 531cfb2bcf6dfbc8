#!/usr/bin/env bash
# Session 31, call 2 (written, not run): every bench beside its PyTorch baseline on the patched
# tree (the suite runs in call 1), then more A (patched) / B (build-old) rounds where call 1 does
# not time: fp8 (e4m3) production configurations, page 1 and page 32, A B B A. Argument: the
# staged commit.
echo "$1" > "$OUT/commit.txt"
[ -x build-stage/flashjit_bench_decode ] || tar xzf build-pack/build-stage.tar.gz
[ -x build-old/flashjit_bench_decode ] || tar xzf build-pack/build-old.tar.gz
start=$SECONDS
side() {  # $1: A or B, then the bench's arguments (either may compile at Plan: not timed)
  local s=build-stage
  [ "$1" = B ] && s=build-old
  shift
  FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/$s FLASHJIT_CACHE_DIR=$PWD/$s/gpu-cache \
    timeout 60 $s/flashjit_bench_decode "$@"
}
export FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache LD_LIBRARY_PATH=$PWD/build-stage FLASHJIT_ARCH=sm_90a
{
  for b in engine launch norm rope activation page decode sampling cascade pdl; do
    echo; echo "==== bench $b ($(date +%T))"
    FLASHJIT_DISABLE_JIT=1 OUT= timeout 90 build-stage/flashjit_bench_$b
  done
} > "$OUT/bench.log" 2>&1
echo "bench: $((SECONDS - start)) s"
for t in layer_ops decode sampling cascade; do
  echo; echo "==== torch $t ($(date +%T))"
  timeout 120 python3 tools/bench/torch_$t.py
done > "$OUT/torch.log" 2>&1
echo "torch: $((SECONDS - start)) s"
for r in A B B A; do
  [ $((SECONDS - start)) -gt 500 ] && break
  echo "==== $r ($(date +%T))"
  side $r --kv e4m3 --configs base,tp8,qwen7b,d64
  side $r --configs page1
  side $r --page-size 32
done > "$OUT/ab2.log" 2>&1
echo "total: $((SECONDS - start)) s"
