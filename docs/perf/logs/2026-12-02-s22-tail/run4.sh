# Session 22, call 4 (diagnostic): do the one-wave plans lose their rate to the slots they leave
# empty? bf16 32/8 heads D 128 page 16, unsplit plans of 248 / 256 / 264 CTAs of 512 tiles
# (B=31 / 32 / 33 at L=32k) against two waves (B=64 / 66 at L=16k: 512 / 528 CTAs of 256 tiles),
# and the split B=8 / 16 L=32k; tails off and on (the default, 3 %), two rounds (forward, reverse).
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
unset FLASHJIT_DECODE_TAIL
start=$SECONDS
L=/tmp/s22; rm -rf $L; mkdir -p $L
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
SH="31x32768,32x32768,33x32768,64x16384,66x16384,16x32768,8x32768"
r=0
for t in 0 def def 0; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== tail $t round $((++r)) ($(date +%T))" >> $L/ab.log
  timeout 100 $N/flashjit_bench_decode --batches 8,16,31,32,33,64,66 --lengths 16384,32768 \
    --shapes $SH --plan >> $L/ab.log 2>&1; echo "exit $?" >> $L/ab.log
done
unset FLASHJIT_DECODE_TAIL
grep "^decode" $L/ab.log | cut -c1-150
cp $L/ab.log $L/device.txt $OUT/
echo "total: $((SECONDS - start)) s"
