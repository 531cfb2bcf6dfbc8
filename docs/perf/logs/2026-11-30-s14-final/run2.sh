# Session 14's consolidated call, part 2: its sweeps again (the stage of part 1 lacked the
# configurations' kernels: the bench's --configs rows were not in its dry run): decode's production
# configurations beside cuDNN, and the D 64 stage A/B (FLASHJIT_DECODE_STAGES=4: session 13's form).
echo "$1" > "$OUT/commit.txt"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s14sweeps; rm -rf $L; mkdir -p $L; start=$SECONDS
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
    echo "d64 $r $st exit $?"
  done
done
tar czf $OUT/sweeps.tgz -C $L .
grep -E "^====|^exit" $L/decode_configs.log
echo "total: $((SECONDS - start)) s"
