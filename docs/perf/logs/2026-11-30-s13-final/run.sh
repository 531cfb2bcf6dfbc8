# Session 13's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline (synced / queued / back to back), pytest, the Llama step, the Python
# overhead, the sanitizers over this session's changed code (decode plan model, production
# configuration cases; norm chooser rules; RoPE slots), then the session's new sweeps: decode's
# production configurations beside cuDNN and the layer ops' model shapes beside PyTorch.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='*production configurations small*,*not a multiple of 8 over more than 128 rows*,layernorm above hidden 8192*,rope: shapes\, dtypes and head counts'
export RACECHECK_TESTS='*production configurations small*,layernorm above hidden 8192*'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s13sweeps; rm -rf $L; mkdir -p $L
CFGS=base,tp8,tp4,qwen7b,gemma2,gemma2w,mha,d64,page1,page64,f16
{
  echo "==== decode configs ($(date +%T))"
  timeout 60 $S/flashjit_bench_decode --plan --configs $CFGS; echo "exit $?"
  echo "==== torch decode configs ($(date +%T))"
  timeout 60 python3 tools/bench/torch_decode.py --backends cudnn --configs $CFGS; echo "exit $?"
} > $L/decode_configs.log 2>&1
tar czf $OUT/sweeps.tgz -C $L .
if [ $((SECONDS - start)) -lt 420 ]; then
  for b in norm activation rope page; do
    (cd $L && OUT=$L timeout 60 $S/flashjit_bench_$b --models > $L/bench_$b.log 2>&1); echo "models $b rc $? $(date -u +%T)"
  done
  (cd tools/bench && timeout 60 python3 torch_layer_ops.py --models > $L/torch_models.log 2>&1); echo "torch models rc $? $(date -u +%T)"
else
  echo "layer model sweeps skipped (time)"
fi
tar czf $OUT/sweeps.tgz -C $L .
grep -E "^====|^exit" $L/decode_configs.log
echo "total: $((SECONDS - start)) s"
