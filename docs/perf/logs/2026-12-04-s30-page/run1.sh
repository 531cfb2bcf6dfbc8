#!/usr/bin/env bash
# Session 30, call 1: the consolidated run on the compiled-in page size (variant field page_size,
# FixedPageTileLoader): the whole GPU suite (JIT disabled), demo, every bench beside PyTorch,
# pytest, memcheck / racecheck on decode subsets with the new cases. Then the decode bench
# A (default: page size compiled in) / B (FLASHJIT_DECODE_FIXED_PAGE=0: read at run time, the
# kernels before this session) interleaved A B B A A B B A, and the production configurations
# once each way (B compiles its variants on the device: not timed). Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
[ -f build-pack/build-stage.tar.gz ] && tar xzf build-pack/build-stage.tar.gz
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=100
export MEMCHECK_TESTS='batch decode: compiled-in page sizes*,batch decode: tail pieces small,batch decode: page sizes that do not divide a tile,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: compiled-in page sizes\, splits and windows,batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache
for r in A B B A A B B A; do
  [ $((SECONDS - start)) -gt 520 ] && break
  echo "==== $r ($(date +%T))"
  if [ $r = A ]; then
    FLASHJIT_DISABLE_JIT=1 timeout 40 build-stage/flashjit_bench_decode
  else
    FLASHJIT_DISABLE_JIT=1 FLASHJIT_DECODE_FIXED_PAGE=0 timeout 40 build-stage/flashjit_bench_decode
  fi
done > "$OUT/ab.log" 2>&1
grep -c "^decode" "$OUT/ab.log"
cfg=base,tp8,tp4,qwen7b,gemma2,mha,d64,page1,page64,f16
for r in A B; do
  [ $((SECONDS - start)) -gt 560 ] && break
  echo "==== $r ($(date +%T))"
  if [ $r = A ]; then
    FLASHJIT_DISABLE_JIT=1 timeout 30 build-stage/flashjit_bench_decode --configs $cfg
  else
    FLASHJIT_DECODE_FIXED_PAGE=0 timeout 30 build-stage/flashjit_bench_decode --configs $cfg
  fi
done > "$OUT/ab_configs.log" 2>&1
echo "total: $((SECONDS - start)) s"
