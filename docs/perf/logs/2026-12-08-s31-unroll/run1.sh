#!/usr/bin/env bash
# Session 31, call 1 (written, not run: no device was lent in session 31): the main loop
# unrolled by its stages + the shared-memory offsets held in registers (A = build-stage: the tree
# with unroll-offsets.patch applied) against the tree without it (B = build-old: its library,
# decode bench and prewarmed kernels); stage.sh builds both. The GPU suite (JIT disabled), demo,
# memcheck / racecheck on the decode cases whose loop paths changed (pair stealing, splits, CTA
# index forms), then the decode bench A B B A A B B A and four production configurations
# A B B A. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
[ -x build-stage/flashjit_bench_decode ] || tar xzf build-pack/build-stage.tar.gz
[ -x build-old/flashjit_bench_decode ] || tar xzf build-pack/build-old.tar.gz
export SKIP="bench torch python" RACECHECK_TIMEOUT=60
export MEMCHECK_TESTS='batch decode: pair stealing small,batch decode: compiled-in page sizes\, splits and windows,batch decode: CTA index forms small'
export RACECHECK_TESTS='batch decode: pair stealing small,batch decode: tail pieces small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -30
echo "full run: $((SECONDS - start)) s"
side() {  # $1: A or B, then the bench's arguments
  # (B may compile a variant its pack lacks, at Plan: not timed)
  local s=build-stage no_jit=1
  [ "$1" = B ] && s=build-old no_jit=0
  shift
  FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/$s FLASHJIT_CACHE_DIR=$PWD/$s/gpu-cache \
    FLASHJIT_DISABLE_JIT=$no_jit timeout 40 $s/flashjit_bench_decode "$@"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
for r in A B B A A B B A; do
  echo "==== $r ($(date +%T))"
  side $r
done > "$OUT/ab.log" 2>&1
echo "ab: $((SECONDS - start)) s"
for r in A B B A; do
  [ $((SECONDS - start)) -gt 520 ] && break
  echo "==== $r ($(date +%T))"
  side $r --configs rope,d64,gemma2,page64
done > "$OUT/ab_configs.log" 2>&1
echo "total: $((SECONDS - start)) s"
