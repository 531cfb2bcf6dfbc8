# Session 14 lead: O's rescale skipped when no row of a warp has a new maximum, and the key mask as
# one unsigned compare (new, build-new-stage) against the tree before (build-old-stage, 478c6bb's
# kernels). The decode cases of cases.txt on the new tree (seed 1, JIT disabled), memcheck, then
# the decode bench (benchmark configuration, fp8, single) and six configurations, old / new
# interleaved, two rounds.
echo "$1" > $OUT/commit.txt
D=docs/perf/logs/2026-11-30-s14-lazy
L=/tmp/lz; rm -rf $L; mkdir -p $L; start=$SECONDS
use() { S=$PWD/$1; export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1; }
use build-new-stage
export FLASHJIT_TEST_SEED=1
i=0; while read -r c; do
  ( timeout 120 $S/flashjit_gpu_tests --durations yes "$c" > $L/case$i.log 2>&1; echo "exit $?" >> $L/case$i.log ) &
  echo "$i $c" >> $L/index.txt; i=$((i+1))
done < $D/cases.txt
wait
for f in $L/case*.log; do echo "$(basename $f): $(grep -E "^All tests passed|test cases" $f | tr '\n' ' ') $(tail -1 $f)"; done
echo "tests: $((SECONDS - start)) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: production configurations small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"; tail -1 $L/memcheck.log
tar czf $OUT/lz.tgz -C $L .
for r in 1 2; do
  for t in old new; do
    use build-$t-stage
    echo "==== round $r $t default" >> $L/bench.log
    timeout 60 $S/flashjit_bench_decode >> $L/bench.log 2>&1
    echo "==== round $r $t configs" >> $L/bench.log
    timeout 60 $S/flashjit_bench_decode --configs d64,gemma2,mha,tp8,qwen7b >> $L/bench.log 2>&1
    echo "bench $r $t: $((SECONDS - start)) s"
    tar czf $OUT/lz.tgz -C $L .
  done
done
echo "total: $((SECONDS - start)) s"
