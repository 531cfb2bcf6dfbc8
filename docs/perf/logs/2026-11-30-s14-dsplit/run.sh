# Session 14 lead: D 256 with the head dim of P.V split over 8 warps (variant d_split) against
# the session 13 form (FLASHJIT_DECODE_D_SPLIT=0: 4 warps, Q from shared memory). Every [decode]
# GPU case (JIT disabled, no compile), memcheck and racecheck on the small production case, then
# the Gemma-2 configurations: split (2 stages), split at 3 stages, the s13 form; two rounds; then
# cuDNN on the same configurations and the benchmark configuration (D 128: unchanged kernels).
echo "$1" > $OUT/commit.txt
S=$PWD/build-ds-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/ds; rm -rf $L; mkdir -p $L
start=$SECONDS
FLASHJIT_DRY_RUN=1 $S/flashjit_gpu_tests --list-test-names-only "[decode]" 2>/dev/null | grep -E "decode" > $L/cases.txt
i=0; while read -r c; do
  c=${c//,/\\,}
  echo "$i $c" >> $L/index.txt
  ( timeout 150 $S/flashjit_gpu_tests --durations yes "$c" > $L/case$i.log 2>&1; echo "exit $?" >> $L/case$i.log ) &
  i=$((i+1)); [ $((i % 8)) -eq 0 ] && wait
done < $L/cases.txt
wait
( FLASHJIT_DECODE_PERSISTENT=1 timeout 100 $S/flashjit_gpu_tests "*persistent*" > $L/persistent_forced.log 2>&1; echo "exit $?" >> $L/persistent_forced.log )
for f in $L/case*.log $L/persistent_forced.log; do echo "$(basename $f): $(grep -E "^All tests passed|test cases" $f | tr '\n' ' ') $(tail -1 $f)"; done
echo "tests: $((SECONDS - start)) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: production configurations small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"; tail -2 $L/memcheck.log
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: production configurations small" > $L/racecheck.log 2>&1; echo "racecheck exit $?"; tail -2 $L/racecheck.log
tar czf $OUT/ds.tgz -C $L .
for r in 1 2; do
  for env in "" "FLASHJIT_DECODE_STAGES=3" "FLASHJIT_DECODE_D_SPLIT=0"; do
    echo "==== round $r form ${env:-split}" >> $L/bench.log
    env $env timeout 40 $S/flashjit_bench_decode --configs gemma2,gemma2w >> $L/bench.log 2>&1
  done
  tar czf $OUT/ds.tgz -C $L .
done
echo "benches: $((SECONDS - start)) s"
timeout 60 python3 tools/bench/torch_decode.py --backends cudnn --configs gemma2,gemma2w > $L/torch.log 2>&1; echo "torch exit $?"
timeout 40 $S/flashjit_bench_decode > $L/bench_base.log 2>&1; echo "base exit $?"
tar czf $OUT/ds.tgz -C $L .
grep -E "^====|^decode" $L/bench.log | awk '{print $1, $2, $4, $5, $6, $(NF-9), $(NF-3)}' | head -80
echo "total: $((SECONDS - start)) s"
