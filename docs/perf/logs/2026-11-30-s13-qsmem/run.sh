# Session 13 lead: D 256 with Q's fragments read from shared memory (variant q_smem) against the
# registers form (FLASHJIT_DECODE_Q_SMEM=0): the D 256 GPU cases (JIT disabled, no compile),
# memcheck and racecheck on the small production case, then the Gemma-2 configurations A B A B.
S=$PWD/build-qs-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/qs; rm -rf $L; mkdir -p $L
cases=("single decode: dtypes and head dims" "batch decode: dtypes\, head dims\, knobs"
  "batch decode: production configurations" "batch decode: production configurations small"
  "batch decode: persistent grid over ragged batches" "single decode: logits far below zero and variant knobs")
for i in "${!cases[@]}"; do
  (timeout 100 $S/flashjit_gpu_tests --durations yes "${cases[$i]}" > $L/case$i.log 2>&1; echo "exit $?" >> $L/case$i.log) &
done
wait
for i in "${!cases[@]}"; do echo "${cases[$i]}: $(grep -E "^All tests passed|test cases|engine:" $L/case$i.log | tr '\n' ' ') $(tail -1 $L/case$i.log)"; done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: production configurations small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"; tail -2 $L/memcheck.log
tar czf $OUT/qs.tgz -C $L .
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: production configurations small" > $L/racecheck.log 2>&1; echo "racecheck exit $?"; tail -2 $L/racecheck.log
for r in 1 2; do
  for qs in 0 auto; do
    echo "==== round $r q_smem $qs" >> $L/bench.log
    FLASHJIT_DECODE_Q_SMEM=$qs timeout 40 $S/flashjit_bench_decode --configs gemma2,gemma2w >> $L/bench.log 2>&1
  done
  tar czf $OUT/qs.tgz -C $L .
done
tar czf $OUT/qs.tgz -C $L .
grep -E "^====|^decode" $L/bench.log | awk '{print $1, $2, $4, $5, $6, $(NF-9), $(NF-3)}' | head -100
