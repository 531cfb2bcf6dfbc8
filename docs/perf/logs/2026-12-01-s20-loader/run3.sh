# Session 20, call 4: the consolidated run on the final tree (the loader that divides once a
# tile, the fp8 epilogue's float4 writes; fp8 at D 256 on its earlier forms): the whole GPU
# suite, demo, every bench with its PyTorch baseline, pytest, the Llama step, memcheck and
# racecheck on decode subsets; then Gemma-2's fp8 shapes (D 256), old (HEAD 9141dda, build-old)
# against new, two rounds interleaved, with base fp8 as a control; and tp8 bf16 (call 2's one
# back-to-back outlier, B=1 L=4k).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
tar xzf build-pack/old.tar.gz
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='batch decode: fp8 KV*,batch decode: page sizes that do not divide a tile,batch decode: production configurations small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
S=$PWD/build-stage; O=$PWD/build-old
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
G="--plan --kv e4m3 --configs gemma2,base --lengths 1024,4096,16384"
for round in 1 2; do
  for t in old new; do
    D=$S; B=$S/flashjit_bench_decode
    [ $t = old ] && D=$O && B=$O/flashjit_bench_decode
    echo "==== fp8 $t round $round ($(date +%T))" >> "$OUT/gemma2_fp8.log"
    LD_LIBRARY_PATH=$D FLASHJIT_CACHE_DIR=$D/gpu-cache timeout 100 $B $G >> "$OUT/gemma2_fp8.log" 2>&1
    echo "exit $?" >> "$OUT/gemma2_fp8.log"
    echo "==== tp8 $t round $round ($(date +%T))" >> "$OUT/tp8_bf16.log"
    LD_LIBRARY_PATH=$D FLASHJIT_CACHE_DIR=$D/gpu-cache timeout 60 $B --plan --configs tp8 --lengths 1024,4096,16384 >> "$OUT/tp8_bf16.log" 2>&1
    echo "exit $?" >> "$OUT/tp8_bf16.log"
  done
done
echo "gemma2 A/B at $((SECONDS - start)) s"
