# Session 17, call 5 (final tree; the loader's rule for in-page positions changed, which re-keys
# every decode kernel): the whole GPU suite, demo, pytest, the Llama step; memcheck on the fp8
# case; then old (session 16, build-old) against the final tree, two rounds interleaved: 16-bit
# KV and fp8 KV over the configurations. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP="bench cascade-ab torch overhead-ab sanitize"
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed" "$OUT/all.txt" | tail -20
echo "suite: $((SECONDS - start)) s"
S=$PWD/build-stage
LD_LIBRARY_PATH=$S FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_DISABLE_JIT=1 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 \
  $S/flashjit_gpu_tests "batch decode: fp8 KV*" > $OUT/memcheck.log 2>&1; echo "memcheck exit $?" >> $OUT/memcheck.log
tail -3 $OUT/memcheck.log
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s17e; rm -rf $L; mkdir -p $L
for round in 1 2; do
  for t in old new; do
    B=$PWD/build-old; [ $t = new ] && B=$S
    echo "==== bf16 configs $t round $round ($(date +%T))" >> $L/bf16.log
    LD_LIBRARY_PATH=$B FLASHJIT_CACHE_DIR=$B/gpu-cache timeout 90 $B/flashjit_bench_decode --plan --configs base,gemma2,d64,mha,tp8,page1 >> $L/bf16.log 2>&1
    echo "exit $?" >> $L/bf16.log
    echo "==== fp8 configs $t round $round ($(date +%T))" >> $L/fp8.log
    LD_LIBRARY_PATH=$B FLASHJIT_CACHE_DIR=$B/gpu-cache timeout 90 $B/flashjit_bench_decode --plan --kv e4m3 --configs base,tp8,qwen7b,d64,gemma2,page1 >> $L/fp8.log 2>&1
    echo "exit $?" >> $L/fp8.log
    tar czf $OUT/sweeps.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 420 ] && break
done
grep -E "^====|^exit" $L/bf16.log $L/fp8.log | tail -16
echo "total: $((SECONDS - start)) s"
