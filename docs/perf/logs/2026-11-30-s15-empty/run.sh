# Session 15, after the second consolidated call (tree 27d9997 + bench --lengths; kernels as in
# 3b25f84): what the merge kernel's launch costs a graph-mode plan that does not split. Graph
# mode, one to four kv heads (wrappers that launch the merge kernel on every replay), short
# contexts (64-256 keys: no split; 512: the merge kernel), FLASHJIT_DECODE_MERGE=fused (no merge
# launch) against the default, interleaved, two rounds.
S=$PWD/build-mini
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
for r in 1 2; do for m in fused auto; do
  echo "==== round $r graph merge $m"
  FLASHJIT_DECODE_MERGE=$m timeout 60 $S/flashjit_bench_decode --graph --plan --configs tp8,tp4,qwen7b \
    --lengths 64,128,256,512 --shapes tp8:1x64,tp8:1x128,tp8:1x256,tp8:1x512,tp8:16x128,tp8:16x512,tp4:1x128,tp4:16x128,qwen7b:1x128,qwen7b:1x512
  echo "exit $?"
done; done > $OUT/empty.log 2>&1
grep -E "^====|^exit|decode_graph" $OUT/empty.log | cut -c1-160
