# Session 15 lead. Call 1: the page-id ring and the CTA-wide merge (reverted after it); call 2: the
# merge kernel (a warp per query head and 32 columns, PDL) for plans whose last-CTA merge is
# large (new: build-new-stage) against the tree before (build-old-stage, bedfd8a). Parts (args):
# tests = every decode / cascade case on the new tree (seed 1, JIT disabled) + sanitizers;
# stamps; ab = old / new interleaved, ROUNDS rounds (benchmark grid + six configurations);
# sweep = forced chunks x merge forms on the new tree (MERGES: the forms, default both).
# Call 3: the merge kernel with 4 warps a CTA splitting the partials, and the plan model pricing
# it (DecodeMergeCost); ab adds the new tree under FLASHJIT_DECODE_MERGE=fused ("newfused").
D=docs/perf/logs/2026-11-30-s15-merge
L=/tmp/s15; mkdir -p $L; start=$SECONDS
use() { S=$PWD/$1; export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1; }
pack() { tar czf $OUT/s15.tgz -C $L .; }
CFGS=tp8,tp4,qwen7b,mha,d64,gemma2
for part in "$@"; do case $part in
tests)
  use build-new-stage; export FLASHJIT_TEST_SEED=1
  i=0; while read -r c; do echo "$i $c" >> $L/index.txt; i=$((i+1)); done < $D/cases.txt
  i=0; while read -r c; do
    ( timeout 200 $S/flashjit_gpu_tests --durations yes "$c" > $L/case$i.log 2>&1; echo "exit $?" >> $L/case$i.log ) &
    i=$((i+1)); while [ $(jobs -r | wc -l) -ge 6 ]; do sleep 0.5; done
  done < $D/cases.txt
  wait
  for f in $L/case*.log; do echo "$(basename $f): $(grep -E "^All tests passed|test cases" $f | tr '\n' ' ') $(tail -1 $f)"; done
  echo "tests: $((SECONDS - start)) s"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: split requests merged small" "batch decode: production configurations small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"; tail -2 $L/memcheck.log
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: split requests merged small" > $L/racecheck.log 2>&1; echo "racecheck exit $?"; tail -2 $L/racecheck.log
  unset FLASHJIT_TEST_SEED; echo "sanitizers: $((SECONDS - start)) s"; pack ;;
stamps)
  for t in old new; do use build-$t-stage
    timeout 60 $S/flashjit_bench_decode --configs tp8,base --shapes tp8:1x16384,base:1x16384 --stamps $L/stamps_$t.txt > $L/stamps_$t.log 2>&1; echo "stamps $t exit $?"
    grep -h "stamps" $L/stamps_$t.log | sed "s/^/$t /"
  done; pack ;;
ab)
  for r in $(seq 1 ${ROUNDS:-1}); do for t in old new newfused; do
    if [ $t = newfused ]; then use build-new-stage; export FLASHJIT_DECODE_MERGE=fused; else use build-$t-stage; fi
    echo "==== round $r $t default" >> $L/bench.log; timeout 90 $S/flashjit_bench_decode >> $L/bench.log 2>&1
    echo "==== round $r $t configs" >> $L/bench.log; timeout 150 $S/flashjit_bench_decode --configs $CFGS >> $L/bench.log 2>&1
    unset FLASHJIT_DECODE_MERGE; echo "bench $r $t: $((SECONDS - start)) s"; pack
  done; done ;;
sweep)
  use build-new-stage
  for k in 64 128 256 512 1024; do for m in ${MERGES:-fused kernel}; do
    echo "==== chunk $k merge $m" >> $L/sweep.log
    FLASHJIT_DECODE_MERGE=$m FLASHJIT_DECODE_CHUNK=$k timeout 100 $S/flashjit_bench_decode --configs tp8,tp4,qwen7b,base,mha,d64,gemma2 --shapes tp8:1x4096,tp8:1x16384,tp4:1x4096,tp4:1x16384,qwen7b:1x4096,qwen7b:1x16384,base:1x4096,base:1x16384,mha:1x4096,mha:1x16384,d64:1x4096,d64:1x16384,tp4:16x4096,base:16x1024,gemma2:1x4096,gemma2:1x16384,tp8:16x16384,d64:16x1024 >> $L/sweep.log 2>&1
    echo "sweep $k $m: $((SECONDS - start)) s"; pack
  done; done ;;
esac; done
echo "total: $((SECONDS - start)) s"
