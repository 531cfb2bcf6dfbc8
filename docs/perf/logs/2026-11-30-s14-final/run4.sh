# Session 14, D 64 plan fix (merge priced at 0.76 tiles a round trip, no persistent grid unless
# forced): the D 64 decode cases (seed 1, JIT disabled), then the d64 configuration, two rounds.
echo "$1" > "$OUT/commit.txt"
S=$PWD/build-d64b-stage; D=docs/perf/logs/2026-11-30-s14-final
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 FLASHJIT_TEST_SEED=1
L=$OUT; start=$SECONDS; i=0
while read -r c; do
  ( timeout 100 $S/flashjit_gpu_tests "$c" > /tmp/case$i.log 2>&1; echo "exit $?" >> /tmp/case$i.log ) &
  i=$((i+1))
done < $D/cases4.txt
wait
for f in /tmp/case*.log; do echo "$(basename $f): $(grep -E "^All tests passed|test cases" $f | tr '\n' ' ') $(tail -1 $f)"; done | tee $L/tests4.txt
cat /tmp/case*.log > $L/tests4_full.log
for r in 1 2; do timeout 30 $S/flashjit_bench_decode --plan --configs d64 >> $L/d64_fix.log 2>&1; echo "bench $r exit $?"; done
echo "total: $((SECONDS - start)) s"
