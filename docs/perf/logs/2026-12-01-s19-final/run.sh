# Session 19, consolidated call on the final tree (session 18's code; session 19's fp8 persistent
# grid reverted): the whole GPU suite, demo, every bench with its PyTorch baseline, pytest, the
# Llama step, memcheck and racecheck on decode subsets; then decode's production configurations
# over 16-bit and fp8 caches, one round. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='batch decode: fp8 KV*,batch decode: production configurations small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
timeout 100 $S/flashjit_bench_decode --plan --configs base,tp8,tp4,qwen7b,gemma2,gemma2w,mha,d64,page1,page64,f16 > "$OUT/configs_bf16.log" 2>&1
echo "configs bf16 exit $? at $((SECONDS - start)) s"
timeout 100 $S/flashjit_bench_decode --plan --kv e4m3 --configs base,tp8,tp4,qwen7b,gemma2,mha,d64,page1,page64,f16 > "$OUT/configs_fp8.log" 2>&1
echo "configs fp8 exit $? at $((SECONDS - start)) s"
