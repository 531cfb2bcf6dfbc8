#!/usr/bin/env bash
# Session 28, the query's loads before the page ids (call 10): the 31 decode GPU cases of the new
# tree (JIT disabled, one process per case, 8 at a time), memcheck on two small cases, then the
# bench grid A (build-old: the tree before) / B (the new tree) interleaved A B B A A B, and the
# stamps of the new tree at B=256 L=1k, B=64 L=4k, B=16 L=4k.
set -u
export FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
T=build/tests/flashjit_gpu_tests
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache
cases=$(mktemp -d)
FLASHJIT_DRY_RUN=1 $T --list-test-names-only 2>/dev/null | grep -E "decode" > $cases/names
run_case() {
  local name; name=$(sed -n "$1p" "$cases/names")
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout 300 "$T" "${name//,/\\,}" > "$cases/$1.log" 2>&1
  echo "exit $?" >> "$cases/$1.log"
}
export -f run_case; export T cases
seq 1 $(wc -l < $cases/names) | xargs -P 8 -I{} bash -c 'run_case {}'
i=0; pass=0; fail=0
while IFS= read -r name; do
  i=$((i + 1)); rc=$(sed -n 's/^exit //p' $cases/$i.log)
  a=$(sed -n 's/^All tests passed (\([0-9]*\) assertion.*/\1/p' $cases/$i.log)
  if [ "$rc" = 0 ] && [ -n "$a" ]; then pass=$((pass + 1)); echo "PASS $a $name"; else
    fail=$((fail + 1)); echo "FAIL ($rc) $name"; tail -30 $cases/$i.log | sed 's/^/    | /'; fi
done < $cases/names > $OUT/tests.log
echo "decode cases: $pass passed, $fail failed" | tee -a $OUT/tests.log
for c in "batch decode: CTA index forms small" "batch decode: persistent grid\, short units and merges"; do
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $T "$c" 2>&1 | tail -4
  echo "memcheck exit $? : $c"
done > $OUT/sanitizer.log 2>&1
tail -4 $OUT/sanitizer.log
for r in A B B A A B; do
  if [ $r = A ]; then bin=build-old/flashjit_bench_decode; cache=$PWD/build-old/gpu-cache;
  else bin=build/tools/bench/flashjit_bench_decode; cache=$PWD/build/gpu-cache; fi
  echo "==== $r"
  FLASHJIT_CACHE_DIR=$cache $bin
done > $OUT/bench.log 2>&1
build/tools/bench/flashjit_bench_decode --shapes 256x1024,64x4096,16x4096 --stamps $OUT/stamps.txt > $OUT/stamps.log 2>&1
grep "^stamps" $OUT/stamps.log | cut -c1-200
