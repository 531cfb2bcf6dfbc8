#!/usr/bin/env bash
# Session 29, call 6: two warp groups a CTA (FLASHJIT_DECODE_WARP_GROUPS=2: 8 warps, two groups
# of 4 on alternate tiles of one 6-stage ring, states merged before the epilogue; plans of one
# CTA an SM, no clusters, persistent grid or pair stealing). (1) Ten decode GPU cases with the
# knob (fp64 reference, adversarial cases; JIT disabled: build-wg's cache was prewarmed with the
# knob), (2) memcheck and racecheck on two of them, (3) the bench A (build-stage: HEAD) / B (the
# knob) interleaved A B B A A B, (4) B's stamps at B=16 L=1k / 4k.
set -u
[ -d build-stage ] || tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
W=$PWD/build-wg
T=$W/flashjit_gpu_tests
run_case() {
  local name; name=$(sed -n "$1p" "$W/cases.txt")
  FLASHJIT_DECODE_WARP_GROUPS=2 FLASHJIT_CACHE_DIR=$W/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1 \
    timeout 300 "$T" "${name//,/\\,}" > "/tmp/case$1.log" 2>&1
  echo "exit $?" >> "/tmp/case$1.log"
}
export -f run_case; export W T
seq 1 $(wc -l < $W/cases.txt) | xargs -P 8 -I{} bash -c 'run_case {}'
i=0
while IFS= read -r name; do
  i=$((i + 1)); rc=$(sed -n 's/^exit //p' /tmp/case$i.log)
  a=$(sed -n 's/^All tests passed (\([0-9]*\) assertion.*/\1/p' /tmp/case$i.log)
  if [ "$rc" = 0 ] && [ -n "$a" ]; then echo "PASS $a $name"; else
    echo "FAIL ($rc) $name"; tail -40 /tmp/case$i.log | sed 's/^/    | /'; fi
done < $W/cases.txt > $OUT/tests.log
cat $OUT/tests.log | grep -v "^    |" ; grep -c "^PASS" $OUT/tests.log
for tool in memcheck racecheck; do
  for c in "batch decode: split requests merged small" "single decode: dtypes and head dims"; do
    FLASHJIT_DECODE_WARP_GROUPS=2 FLASHJIT_CACHE_DIR=$W/gpu-cache timeout 150 compute-sanitizer \
      --tool $tool --error-exitcode 9 $T "$c" 2>&1 | tail -3
    echo "$tool exit $? : $c"
  done
done > $OUT/sanitizer.log 2>&1
grep "exit\|SUMMARY" $OUT/sanitizer.log
for r in A B B A A B; do
  echo "==== $r"
  if [ $r = A ]; then
    LD_LIBRARY_PATH=$PWD/build-stage FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache timeout 60 \
      build-stage/flashjit_bench_decode
  else
    FLASHJIT_DECODE_WARP_GROUPS=2 FLASHJIT_CACHE_DIR=$W/gpu-cache timeout 60 $W/flashjit_bench_decode
  fi
done > $OUT/ab.log 2>&1
grep -c "^decode" $OUT/ab.log
FLASHJIT_DECODE_WARP_GROUPS=2 FLASHJIT_CACHE_DIR=$W/gpu-cache timeout 60 $W/flashjit_bench_decode \
  --shapes 16x1024,1x32768 --plan --stamps $OUT/stamps.txt > $OUT/stamps.log 2>&1
grep "^stamps.*alone\|^plan" $OUT/stamps.log | cut -c1-250
gzip $OUT/stamps.txt
