# Session 17, call 2: three fp8 kernel forms on their own kernel caches, two rounds interleaved:
# v1 = call 1's new tree (build-stage), v2 = v1 + the keys' byte pairs without a permute
# (569 instructions a step against 585), v3 = v2 + two accumulators per S tile (chains of 4
# dependent mma instead of 8; 586 instructions). fp8 grid shapes and fp8 over the configurations.
echo "$1" > "$OUT/commit.txt"
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s17b; rm -rf $L; mkdir -p $L
GRID=e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024
for round in 1 2; do
  for t in v1 v2 v3; do
    B=$PWD/build-$t; [ $t = v1 ] && B=$PWD/build-stage
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
