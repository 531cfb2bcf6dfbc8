# Session 14 lead, call 5 (tree of argument 1): D 64 (d64 configuration) at 4 / 3 / 2 stages, two
# rounds interleaved; the few-kv-head B=1 shapes (tp8, tp4, qwen7b at L=4k / 16k) with per-CTA
# stamps; Gemma-2 on the final D 256 kernel.
echo "$1" > $OUT/commit.txt
S=$PWD/build-d64-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/d64; rm -rf $L; mkdir -p $L; start=$SECONDS
for r in 1 2; do
  for st in 4 3 2; do
    echo "==== round $r stages$st configs" >> $L/bench.log
    FLASHJIT_DECODE_STAGES=$st timeout 40 $S/flashjit_bench_decode --configs d64 >> $L/bench.log 2>&1
  done
done
echo "d64: $((SECONDS - start)) s"
timeout 60 $S/flashjit_bench_decode --configs tp8,tp4,qwen7b --shapes 1x4096,1x16384 --stamps $L/stamps.txt > $L/stamps.log 2>&1; echo "stamps exit $?"
timeout 40 $S/flashjit_bench_decode --configs gemma2 > $L/gemma2.log 2>&1; echo "gemma2 exit $?"
tar czf $OUT/d64.tgz -C $L .
grep -E "^stamps" $L/stamps.log | cut -c1-250
echo "total: $((SECONDS - start)) s"
