# Session 14's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline (synced / queued / back to back), pytest, the Llama step, the Python
# overhead, the sanitizers over this session's changed decode code (soft cap, lazy rescale and key
# mask, D 64 at 3 stages and the persistent grid's capacity), then decode's production
# configurations beside cuDNN and the D 64 stage A/B (FLASHJIT_DECODE_STAGES=4: session 13's form).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='*production configurations small*,*persistent grid\, short units and merges*'
export RACECHECK_TESTS='*production configurations small*,*persistent grid\, short units and merges*'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s14sweeps; rm -rf $L; mkdir -p $L
CFGS=base,tp8,tp4,qwen7b,gemma2,gemma2w,mha,d64,page1,page64,f16
{
  echo "==== decode configs ($(date +%T))"
  timeout 60 $S/flashjit_bench_decode --plan --configs $CFGS; echo "exit $?"
  echo "==== torch decode configs ($(date +%T))"
  timeout 60 python3 tools/bench/torch_decode.py --backends cudnn --configs $CFGS; echo "exit $?"
} > $L/decode_configs.log 2>&1
tar czf $OUT/sweeps.tgz -C $L .
for r in 1 2; do
  for st in default 4; do
    echo "==== round $r stages$st" >> $L/d64_ab.log
    if [ $st = default ]; then timeout 30 $S/flashjit_bench_decode --configs d64 >> $L/d64_ab.log 2>&1
    else FLASHJIT_DECODE_STAGES=4 timeout 30 $S/flashjit_bench_decode --configs d64 >> $L/d64_ab.log 2>&1; fi
  done
done
tar czf $OUT/sweeps.tgz -C $L .
grep -E "^====|^exit" $L/decode_configs.log
echo "total: $((SECONDS - start)) s"
