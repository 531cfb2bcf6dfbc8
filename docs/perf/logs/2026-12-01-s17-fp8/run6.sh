# Session 17, call 6 (diagnostic, no code change; the final tree 3201e60's kernels in build-v7):
# fp8 KV chunk sweep over the base configuration at 1k / 4k / 16k keys. FLASHJIT_DECODE_CHUNK
# 512 / 1024 / 2048 / 4096 against the plan model's default, two rounds interleaved; the
# wrapper's capacity raised (--max-batch 256) so that the knob's plans fit.
echo "$1" > "$OUT/commit.txt"
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
B=$PWD/build-v7
export LD_LIBRARY_PATH=$B FLASHJIT_CACHE_DIR=$B/gpu-cache
start=$SECONDS
L=/tmp/s17f; rm -rf $L; mkdir -p $L
for round in 1 2; do
  for c in default 512 1024 2048 4096; do
    echo "==== chunk $c round $round ($(date +%T))" >> $L/chunk.log
    if [ $c = default ]; then env -u FLASHJIT_DECODE_CHUNK timeout 40 $B/flashjit_bench_decode --plan --max-batch 256 --kv e4m3 --configs base --lengths 1024,4096,16384 >> $L/chunk.log 2>&1
    else FLASHJIT_DECODE_CHUNK=$c timeout 40 $B/flashjit_bench_decode --plan --max-batch 256 --kv e4m3 --configs base --lengths 1024,4096,16384 >> $L/chunk.log 2>&1; fi
    echo "exit $?" >> $L/chunk.log
  done
  tar czf $OUT/sweeps.tgz -C $L .
  [ $((SECONDS - start)) -gt 150 ] && break
done
grep -E "^====|^exit" $L/chunk.log | tail -20
echo "total: $((SECONDS - start)) s"
