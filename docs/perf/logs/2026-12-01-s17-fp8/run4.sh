# Session 17, call 4: old / v2 / v4 / new, two rounds interleaved, each on its own kernel cache:
# old = session 16's tree (build-old), v2 = call 1's tree with the keys' byte pairs unpermuted
# (build-v2; fp8 shapes only), v4 = v2 + the loader's offsets (3716536), new = the final tree
# (build-stage: + unmasked whole steps and the folded unscale). The benchmark grid's fp8 and
# bf16 shapes and fp8 KV over the configurations. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s17d; rm -rf $L; mkdir -p $L
FP8=e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024
BF16=1x4096,16x1024,16x4096,64x1024,64x4096,16x32768,256x1024
for round in 1 2; do
  for t in old v2 v4 new; do
    B=$PWD/build-$t; [ $t = new ] && B=$PWD/build-stage
    GRID=$FP8,$BF16; [ $t = v2 ] && GRID=$FP8
    echo "==== grid $t round $round ($(date +%T))" >> $L/grid.log
    LD_LIBRARY_PATH=$B FLASHJIT_CACHE_DIR=$B/gpu-cache timeout 60 $B/flashjit_bench_decode --plan --shapes $GRID >> $L/grid.log 2>&1
    echo "exit $?" >> $L/grid.log
    echo "==== fp8 configs $t round $round ($(date +%T))" >> $L/fp8.log
    LD_LIBRARY_PATH=$B FLASHJIT_CACHE_DIR=$B/gpu-cache timeout 90 $B/flashjit_bench_decode --plan --kv e4m3 --configs base,tp8,qwen7b,d64,gemma2,page1 >> $L/fp8.log 2>&1
    echo "exit $?" >> $L/fp8.log
    tar czf $OUT/sweeps.tgz -C $L .
  done
done
grep -E "^====|^exit" $L/grid.log $L/fp8.log | tail -24
echo "total: $((SECONDS - start)) s"
