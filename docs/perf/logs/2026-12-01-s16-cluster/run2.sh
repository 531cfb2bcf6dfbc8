# Session 16's second call (tree 35c1f8d: graph-mode clusters of 2 only past the merge kernel's
# small batches; the steal test reads the 32-byte plan header): the GPU suite, demo and the
# sanitizers on the graph cluster case; the graph-mode A/B again (default rule against no
# clusters, two rounds interleaved); the benchmark grid in graph mode; then a chunk sweep at B=1
# (FLASHJIT_DECODE_CHUNK) outside graph mode: are one-wave merge-kernel plans split too finely?
echo "$1" > "$OUT/commit.txt"
export SKIP="bench cascade-ab torch python overhead-ab" RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='*a CUDA graph in thread-block clusters*,*a CUDA graph captured once*,*pair stealing small*'
export RACECHECK_TESTS='*a CUDA graph in thread-block clusters*'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -40
echo "suite: $((SECONDS - start)) s"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s16b; rm -rf $L; mkdir -p $L
CFGS=base,tp8,tp4,qwen7b,mha,page1,page64,f16
for round in 1 2; do
  for g in 0 2; do
    echo "==== graph cluster $g round $round ($(date +%T))" >> $L/graph_ab.log
    FLASHJIT_DECODE_GRAPH_CLUSTER=$g timeout 60 $S/flashjit_bench_decode --graph --plan --configs $CFGS >> $L/graph_ab.log 2>&1
    echo "exit $?" >> $L/graph_ab.log
    echo "==== graph cluster $g round $round ($(date +%T))" >> $L/graph_short.log
    FLASHJIT_DECODE_GRAPH_CLUSTER=$g timeout 60 $S/flashjit_bench_decode --graph --plan --configs base,tp8,qwen7b,mha --lengths 256,512,2048 >> $L/graph_short.log 2>&1
    echo "exit $?" >> $L/graph_short.log
  done
  tar czf $OUT/sweeps.tgz -C $L .
done
echo "==== graph benchmark grid ($(date +%T))" >> $L/grid.log
timeout 60 $S/flashjit_bench_decode --graph --plan >> $L/grid.log 2>&1; echo "exit $?" >> $L/grid.log
tar czf $OUT/sweeps.tgz -C $L .
for round in 1 2; do
  for c in default 128 256 512 1024; do
    echo "==== chunk $c round $round ($(date +%T))" >> $L/chunk.log
    if [ $c = default ]; then env -u FLASHJIT_DECODE_CHUNK timeout 40 $S/flashjit_bench_decode --plan --configs base,tp4,qwen7b,page64,mha --lengths 2048,4096,8192 --shapes 1x2048,1x4096,1x8192 >> $L/chunk.log 2>&1
    else FLASHJIT_DECODE_CHUNK=$c timeout 40 $S/flashjit_bench_decode --plan --configs base,tp4,qwen7b,page64,mha --lengths 2048,4096,8192 --shapes 1x2048,1x4096,1x8192 >> $L/chunk.log 2>&1; fi
    echo "exit $?" >> $L/chunk.log
  done
  tar czf $OUT/sweeps.tgz -C $L .
  [ $((SECONDS - start)) -gt 480 ] && break
done
grep -E "^====|^exit" $L/*.log | tail -30
echo "total: $((SECONDS - start)) s"
