# Session 15's consolidated call: the whole GPU suite (one process per case), demo, every bench
# with its PyTorch baseline (synced / queued / back to back), pytest, the Llama step, the
# sanitizers over this session's changed decode code (the merge kernel, the merge forms forced
# over many partials), then decode's production configurations beside cuDNN, their plans, and
# the configurations again under FLASHJIT_DECODE_MERGE=fused (session 14's plans), interleaved.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='*split requests merged small*,*production configurations small*,*persistent grid\, short units and merges*'
export RACECHECK_TESTS='*split requests merged small*,*production configurations small*'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s15sweeps; rm -rf $L; mkdir -p $L
CFGS=base,tp8,tp4,qwen7b,gemma2,gemma2w,mha,d64,page1,page64,f16
{
  echo "==== decode configs ($(date +%T))"
  timeout 60 $S/flashjit_bench_decode --plan --configs $CFGS; echo "exit $?"
  echo "==== torch decode configs ($(date +%T))"
  timeout 60 python3 tools/bench/torch_decode.py --backends cudnn --configs $CFGS; echo "exit $?"
} > $L/decode_configs.log 2>&1
tar czf $OUT/sweeps.tgz -C $L .
for m in fused auto; do
  echo "==== merge $m ($(date +%T))" >> $L/merge_ab.log
  if [ $m = fused ]; then FLASHJIT_DECODE_MERGE=fused timeout 60 $S/flashjit_bench_decode --plan --configs $CFGS >> $L/merge_ab.log 2>&1
  else timeout 60 $S/flashjit_bench_decode --configs $CFGS >> $L/merge_ab.log 2>&1; fi
  echo "exit $?" >> $L/merge_ab.log
done
tar czf $OUT/sweeps.tgz -C $L .
grep -E "^====|^exit" $L/decode_configs.log $L/merge_ab.log
echo "total: $((SECONDS - start)) s"
