# Session 18, call 8 (the final tree: a lone fp8 tile at 0.75 where the launch goes without PDL):
# the fp8, PDL-chain and production-configuration decode GPU cases, then s18a (0.8, PDL by keys only) against the default on the 25 fp8
# shapes whose plan or PDL differ (7 configurations x 512-16k keys), two rounds interleaved.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s18h; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
timeout 60 $N/flashjit_gpu_tests "batch decode: fp8 KV*" > $L/fp8_case.log 2>&1; echo "fp8 case exit $?"; tail -2 $L/fp8_case.log
for c in "batch decode: programmatic dependent launch over chained runs" "batch decode: production configurations"; do
  timeout 90 $N/flashjit_gpu_tests "$c" > $L/case_$(echo "$c" | md5sum | cut -c1-8).log 2>&1; echo "case exit $? $c"
done
grep -h "^All tests\|^test cases" $L/*.log
SH="--kv e4m3 --configs base,tp8,tp4,qwen7b,mha,page1,page64 --lengths 512,1024,2048,4096,16384 --shapes base:e4m3:16x512,base:e4m3:16x1024,base:e4m3:64x4096,tp8:e4m3:64x1024,tp8:e4m3:64x2048,tp8:e4m3:256x512,tp8:e4m3:256x1024,tp8:e4m3:256x2048,tp8:e4m3:256x4096,tp4:e4m3:64x512,tp4:e4m3:64x1024,tp4:e4m3:256x4096,qwen7b:e4m3:16x1024,qwen7b:e4m3:16x2048,qwen7b:e4m3:64x512,qwen7b:e4m3:64x1024,qwen7b:e4m3:64x2048,qwen7b:e4m3:64x4096,mha:e4m3:16x4096,page1:e4m3:16x512,page1:e4m3:16x1024,page1:e4m3:64x4096,page64:e4m3:16x512,page64:e4m3:16x1024,page64:e4m3:64x4096"
for round in 1 2; do
  for t in old new; do
    m=s18; [ $t = old ] && m=s18a
    echo "==== final $t round $round ($(date +%T))" >> $L/final.log
    FLASHJIT_DECODE_PLAN_MODEL=$m timeout 40 $N/flashjit_bench_decode --plan $SH >> $L/final.log 2>&1
    echo "exit $?" >> $L/final.log
  done
done
tar czf $OUT/logs.tgz -C $L .
grep -E "^====|^exit" $L/final.log | tail -4
