# Session 16's consolidated call (tree: graph-mode wrappers launch in thread-block clusters of one
# size; the template change re-keys every decode kernel): the whole GPU suite, demo, every bench
# with its PyTorch baseline, pytest, the sanitizers on the new graph case; then decode's
# configurations in graph mode (--graph: captured graphs replayed) under
# FLASHJIT_DECODE_GRAPH_CLUSTER=0 (no clusters: session 15's graph plans), the default (2) and 8,
# two rounds interleaved, at the configurations' lengths and at short ones; then the
# configurations outside graph mode and cuDNN beside them. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='*a CUDA graph in thread-block clusters*,*split requests merged small*'
export RACECHECK_TESTS='*a CUDA graph in thread-block clusters*'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s16; rm -rf $L; mkdir -p $L
CFGS=base,tp8,tp4,qwen7b,mha,page1,page64,f16
for round in 1 2; do
  for g in 0 2 8; do
    echo "==== graph cluster $g round $round ($(date +%T))" >> $L/graph_ab.log
    FLASHJIT_DECODE_GRAPH_CLUSTER=$g timeout 60 $S/flashjit_bench_decode --graph --plan --configs $CFGS >> $L/graph_ab.log 2>&1
    echo "exit $?" >> $L/graph_ab.log
    echo "==== graph cluster $g round $round ($(date +%T))" >> $L/graph_short.log
    FLASHJIT_DECODE_GRAPH_CLUSTER=$g timeout 60 $S/flashjit_bench_decode --graph --plan --configs base,tp8,qwen7b,mha --lengths 256,512,2048 >> $L/graph_short.log 2>&1
    echo "exit $?" >> $L/graph_short.log
  done
  tar czf $OUT/sweeps.tgz -C $L .
  [ $((SECONDS - start)) -gt 470 ] && break
done
{
  echo "==== stream configs ($(date +%T))"
  timeout 40 $S/flashjit_bench_decode --configs $CFGS; echo "exit $?"
  echo "==== torch decode configs ($(date +%T))"
  timeout 60 python3 tools/bench/torch_decode.py --backends cudnn --configs $CFGS; echo "exit $?"
} > $L/stream.log 2>&1
tar czf $OUT/sweeps.tgz -C $L .
grep -E "^====|^exit" $L/*.log
echo "total: $((SECONDS - start)) s"
