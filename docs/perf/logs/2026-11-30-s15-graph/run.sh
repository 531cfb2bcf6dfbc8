# Session 15's second consolidated call (tree 3b25f84: the merge kernel in graph mode; its
# template change re-keys every decode kernel): the whole GPU suite, demo, every bench with its
# PyTorch baseline, pytest, the sanitizers on the merge cases; then the decode configurations in
# graph mode (--graph: captured graphs replayed) under FLASHJIT_DECODE_MERGE=fused (no merge
# kernel: session 14's graph plans) and the default, and the configurations outside graph mode.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='*split requests merged small*,*a CUDA graph captured once replays correctly after new plans*'
export RACECHECK_TESTS='*split requests merged small*'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s15graph; rm -rf $L; mkdir -p $L
CFGS=tp8,tp4,qwen7b,base,d64,gemma2,mha
for m in fused auto; do
  echo "==== graph merge $m ($(date +%T))" >> $L/graph_ab.log
  if [ $m = fused ]; then FLASHJIT_DECODE_MERGE=fused timeout 120 $S/flashjit_bench_decode --graph --plan --configs $CFGS >> $L/graph_ab.log 2>&1
  else timeout 120 $S/flashjit_bench_decode --graph --plan --configs $CFGS >> $L/graph_ab.log 2>&1; fi
  echo "exit $?" >> $L/graph_ab.log
  tar czf $OUT/sweeps.tgz -C $L .
done
echo "==== stream configs ($(date +%T))" >> $L/stream.log
timeout 90 $S/flashjit_bench_decode --configs $CFGS >> $L/stream.log 2>&1; echo "exit $?" >> $L/stream.log
tar czf $OUT/sweeps.tgz -C $L .
grep -E "^====|^exit" $L/graph_ab.log $L/stream.log
echo "total: $((SECONDS - start)) s"
