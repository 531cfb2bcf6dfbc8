# Session 22, call 6 (diagnostic): does a third CTA an SM raise the rate of 16-bit decode? Call 4
# found the rate growing with the CTAs that stream (248 / 256 / 264 CTAs: 4.375 / 4.436 / 4.487
# TB/s). Unsplit plans (FLASHJIT_DECODE_CHUNK=1048576, tails off), bf16 32/8 heads D 128 page 16:
# 3 stages (2 CTAs an SM, 264 slots; the default) against 2 stages (3 CTAs an SM, 396 slots):
# B=33 L=32k (264 CTAs), B=49 L=32k (392), B=64 L=32k (512), B=66 L=16k (528), B=99 L=16k (792),
# B=256 L=4k (2048); rounds S3 S2 S2 S3.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 FLASHJIT_DECODE_TAIL=0 FLASHJIT_DECODE_CHUNK=1048576
start=$SECONDS
L=/tmp/s22; rm -rf $L; mkdir -p $L
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
SH="33x32768,49x32768,66x16384,99x16384,64x32768,256x4096"
r=0
for st in 3 2 2 3; do
  echo "==== stages $st round $((++r)) ($(date +%T))" >> $L/ab.log
  FLASHJIT_DECODE_STAGES=$st timeout 100 $N/flashjit_bench_decode --batches 33,49,64,66,99,256 \
    --lengths 4096,16384,32768 --shapes $SH --plan >> $L/ab.log 2>&1; echo "exit $?" >> $L/ab.log
done
grep "^decode" $L/ab.log | cut -c1-150
cp $L/ab.log $L/device.txt $OUT/
echo "total: $((SECONDS - start)) s"
