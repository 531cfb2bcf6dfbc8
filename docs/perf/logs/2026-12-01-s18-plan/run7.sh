# Session 18, call 7 (diagnostic, the final tree): does PDL crowd 16-bit launches too? bf16 KV,
# the 8 shapes of base / tp8 / qwen7b at 512-2k keys whose plans leave free slots (at most
# slots - sms = 132 CTAs of 264) with 4 tiles or more and no merge kernel; PDL by the default rule
# against FLASHJIT_DECODE_PDL=0, two rounds interleaved. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s18g; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
SH="--configs base,tp8,qwen7b --lengths 512,1024,2048 --shapes base:16x512,tp8:16x2048,tp8:64x512,tp8:64x1024,tp8:64x2048,qwen7b:16x512,qwen7b:16x1024,qwen7b:16x2048"
for round in 1 2; do
  for t in old new; do
    echo "==== bf16 pdl $t round $round ($(date +%T))" >> $L/pdl16.log
    if [ $t = old ]; then timeout 40 $N/flashjit_bench_decode --plan $SH >> $L/pdl16.log 2>&1
    else FLASHJIT_DECODE_PDL=0 timeout 40 $N/flashjit_bench_decode --plan $SH >> $L/pdl16.log 2>&1; fi
    echo "exit $?" >> $L/pdl16.log
  done
done
tar czf $OUT/logs.tgz -C $L .
grep -E "^decode" $L/pdl16.log | sed -E 's/ +/ /g' | cut -c1-150
