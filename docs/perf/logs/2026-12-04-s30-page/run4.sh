#!/usr/bin/env bash
# Session 30, call 4: the compiled-in page size where calls 2-3 did not time it: the default grid
# at page 32 (on by default, unmeasured), and the production configurations with a window
# (gemma2w: plans round the window's first key down to a page) and with in-kernel RoPE (rope,
# rope256). A = default, B = FLASHJIT_DECODE_FIXED_PAGE=0, A B B A; JIT allowed (the variants
# these need compile at Plan, which is not timed). Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
[ -x build-stage/flashjit_bench_decode ] || tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache
start=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for r in A B B A; do
  [ $((SECONDS - start)) -gt 150 ] && break
  echo "==== $r ($(date +%T))"
  if [ $r = A ]; then
    timeout 40 build-stage/flashjit_bench_decode --page-size 32
    timeout 40 build-stage/flashjit_bench_decode --configs gemma2w,rope,rope256
  else
    FLASHJIT_DECODE_FIXED_PAGE=0 timeout 40 build-stage/flashjit_bench_decode --page-size 32
    FLASHJIT_DECODE_FIXED_PAGE=0 timeout 40 build-stage/flashjit_bench_decode --configs gemma2w,rope,rope256
  fi
done > "$OUT/ab.log" 2>&1
grep -c "^decode" "$OUT/ab.log"
echo "total: $((SECONDS - start)) s"
