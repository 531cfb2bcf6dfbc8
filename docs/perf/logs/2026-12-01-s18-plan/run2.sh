# Session 18, call 2 (tree 98d503c: fp8 at D 128, a lone tile at 0.8): the final plans' fp8
# benchmark (stream and graph mode, 7 configurations), then diagnostic stamps (per-CTA
# %globaltimer: entry, copies issued, first tile landed, end; SM ids) of fp8 and bf16 at
# B=256 L=1k / 16k (where fp8's fixed cost per CTA looks 5x bf16's) and of B=16 / 64 L=1k under
# both plan models (where 128 lone CTAs read slower back to back than alone).
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s18b; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
CF="--kv e4m3 --configs base,tp8,tp4,qwen7b,mha,page1,page64 --lengths 512,1024,2048,4096,16384"
timeout 150 $N/flashjit_bench_decode --plan $CF > $L/fp8.log 2>&1; echo "exit $?" >> $L/fp8.log
timeout 150 $N/flashjit_bench_decode --graph --plan $CF > $L/fp8_graph.log 2>&1; echo "exit $?" >> $L/fp8_graph.log
echo "bench: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
timeout 90 $N/flashjit_bench_decode --plan --stamps $L/st_fp8.txt --kv e4m3 --configs base --lengths 1024,16384 --shapes base:e4m3:256x1024,base:e4m3:16x1024,base:e4m3:64x1024,base:e4m3:256x16384 > $L/st_fp8.log 2>&1
timeout 90 $N/flashjit_bench_decode --plan --stamps $L/st_bf16.txt --configs base --lengths 1024,16384 --shapes base:256x1024,base:256x16384,base:16x1024 > $L/st_bf16.log 2>&1
FLASHJIT_DECODE_PLAN_MODEL=s13 timeout 90 $N/flashjit_bench_decode --plan --stamps $L/st_fp8_s13.txt --kv e4m3 --configs base --lengths 1024 --shapes base:e4m3:16x1024,base:e4m3:64x1024 > $L/st_fp8_s13.log 2>&1
FLASHJIT_DECODE_CHUNK=1024 timeout 90 $N/flashjit_bench_decode --plan --stamps $L/st_fp8_unsplit.txt --kv e4m3 --configs base --lengths 1024 --shapes base:e4m3:16x1024 > $L/st_fp8_unsplit.log 2>&1
grep -h "^stamps" $L/st_*.log
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
