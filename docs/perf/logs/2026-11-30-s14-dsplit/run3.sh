# Session 14 lead, call 3: the soft cap as cap * (1 - 2 / (1 + 2^(k x))) (SoftCap). The decode
# cases with soft-capped variants (and both D 256 forms' cases), memcheck on the small production
# case, then shapes3.txt in the split form and the s13 form (FLASHJIT_DECODE_D_SPLIT=0), two rounds.
echo "$1" > $OUT/commit.txt
S=$PWD/build-ds-stage; D=docs/perf/logs/2026-11-30-s14-dsplit
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/ds3; rm -rf $L; mkdir -p $L; start=$SECONDS
i=0; while read -r c; do
  ( timeout 120 $S/flashjit_gpu_tests --durations yes "$c" > $L/case$i.log 2>&1; echo "exit $?" >> $L/case$i.log ) &
  echo "$i $c" >> $L/index.txt; i=$((i+1))
done < $D/cases3.txt
wait
for f in $L/case*.log; do echo "$(basename $f): $(grep -E "^All tests passed|test cases" $f | tr '\n' ' ') $(tail -1 $f)"; done
echo "tests: $((SECONDS - start)) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: production configurations small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"; tail -1 $L/memcheck.log
tar czf $OUT/ds3.tgz -C $L .
for r in 1 2; do
  for env in "" "FLASHJIT_DECODE_D_SPLIT=0"; do
    while read -r args; do
      echo "==== round $r form ${env:-split} $args" >> $L/bench.log
      env $env timeout 40 $S/flashjit_bench_decode $args >> $L/bench.log 2>&1
    done < $D/shapes3.txt
  done
  tar czf $OUT/ds3.tgz -C $L .
done
tar czf $OUT/ds3.tgz -C $L .
echo "total: $((SECONDS - start)) s"
