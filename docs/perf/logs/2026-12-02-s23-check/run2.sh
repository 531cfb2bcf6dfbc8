# Session 23, call 2: tail pieces on fp8 (e4m3) caches, which the default leaves uncut. Shapes the
# rule cuts at 3 % (one-wave fp8 plans of >= 96 tiles a slot on 396 slots: B=16 L=32k, B=24
# L=16k/32k, B=48 L=16k/32k) and two it leaves alone (B=8 L=32k, B=32 L=32k), base configuration
# (bf16 q, 32/8 heads, D 128, page 16); forms def (uncut) and 3 (FLASHJIT_DECODE_TAIL=3), three
# rounds each, one process a round, JIT disabled (the stage's dry runs compiled both forms).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
SH="e4m3:16x32768,e4m3:24x16384,e4m3:24x32768,e4m3:48x16384,e4m3:48x32768,e4m3:8x32768,e4m3:32x32768"
r=0
for t in def 3 def 3 3 def; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== tail $t round $((++r)) ($(date +%T))" >> $OUT/ab.log
  timeout 90 $N/flashjit_bench_decode --kv e4m3 --batches 8,16,24,32,48 --lengths 16384,32768 \
    --shapes $SH --plan >> $OUT/ab.log 2>&1; echo "exit $?" >> $OUT/ab.log
done
unset FLASHJIT_DECODE_TAIL
grep "^====\|^decode\|^exit" $OUT/ab.log | cut -c1-150
echo "total: $((SECONDS - start)) s"
