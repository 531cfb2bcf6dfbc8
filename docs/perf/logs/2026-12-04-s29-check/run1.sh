#!/usr/bin/env bash
# Session 29, call 1: the consolidated run on HEAD (session 28's kept change, never run beside
# the whole suite or PyTorch): the whole GPU suite (JIT disabled, no compile allowed), demo, every
# bench with its PyTorch baseline, pytest, the Llama step, memcheck and racecheck on decode
# subsets. Then the decode bench A (HEAD) / B (build-b: Q.K in four MMA chains at D 128)
# interleaved A B B A A B. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
[ -f build-pack/build-stage.tar.gz ] && tar xzf build-pack/build-stage.tar.gz
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='batch decode: tail pieces small,batch decode: fp8 KV*,batch decode: page sizes that do not divide a tile,batch decode: production configurations small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: tail pieces small,batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
export FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
if [ -x build-b/flashjit_bench_decode ]; then
  for r in A B B A A B; do
    [ $((SECONDS - start)) -gt 560 ] && break
    if [ $r = A ]; then d=build-stage; else d=build-b; fi
    echo "==== $r ($(date +%T))"
    LD_LIBRARY_PATH=$PWD/$d FLASHJIT_CACHE_DIR=$PWD/$d/gpu-cache timeout 60 $d/flashjit_bench_decode
  done > "$OUT/ab.log" 2>&1
  grep -c "^decode" "$OUT/ab.log"
fi
echo "total: $((SECONDS - start)) s"
