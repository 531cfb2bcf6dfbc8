#!/usr/bin/env bash
# Session 30, call 3: the consolidated run on the final tree (compiled-in page sizes from 16 keys
# a page; the tail test's host mirror through DecodeFirstKey): the whole GPU suite (JIT
# disabled), demo, every bench beside PyTorch, memcheck / racecheck on small decode subsets
# (call 1 ran memcheck over both new cases and racecheck on one: clean). pytest ran in call 1
# (no Python change since). Then the decode bench A (default) / B (FLASHJIT_DECODE_FIXED_PAGE=0)
# A B B A while time is left. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
[ -f build-pack/build-stage.tar.gz ] && tar xzf build-pack/build-stage.tar.gz
export SKIP="python overhead-ab cascade-ab" RACECHECK_TIMEOUT=80
export MEMCHECK_TESTS='batch decode: compiled-in page sizes\, splits and windows,batch decode: tail pieces small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: tail pieces small,batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -40
echo "full run: $((SECONDS - start)) s"
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache
for r in A B B A; do
  [ $((SECONDS - start)) -gt 540 ] && break
  echo "==== $r ($(date +%T))"
  if [ $r = A ]; then
    FLASHJIT_DISABLE_JIT=1 timeout 30 build-stage/flashjit_bench_decode
  else
    FLASHJIT_DISABLE_JIT=1 FLASHJIT_DECODE_FIXED_PAGE=0 timeout 30 build-stage/flashjit_bench_decode
  fi
done > "$OUT/ab.log" 2>&1
echo "total: $((SECONDS - start)) s"
