# Session 26, call 3: the frequency table's tile and 8-position steps by doubling the angle in
# double (where call 2's tree took two more sincospi an entry: B=1 lost about 1 us), A/B against
# 1694734 (build-mini) over configuration rope, e4m3; the RoPE GPU case; Nsight Compute on the
# new e4m3 rope kernel at B=64 L=16k (instructions, warp states). Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-mini.tar.gz
tar xzf build-pack/build-mini3.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new old old new new old; do
  ((++r))
  N=$PWD/build-mini; [ $form = new ] && N=$PWD/build-mini3
  echo "==== e4m3 $form round $r ($(date +%T))" >> $OUT/ab.log
  LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
    timeout 150 $N/flashjit_bench_decode --kv e4m3 --configs rope $G >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
done
echo "ab: $((SECONDS - start)) s"
N=$PWD/build-mini3
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 200 $N/flashjit_gpu_tests "batch decode: RoPE at every head dim and KV dtype" 2>&1 | tail -3
timeout 180 ncu --clock-control none --kernel-name regex:flashjit_decode --launch-count 1 \
  --set full --import-source no -o $OUT/new_e4m3 -f $N/flashjit_bench_decode --kv e4m3 \
  --configs rope --batches 64 --lengths 16384 --once > $OUT/ncu.log 2>&1
echo "ncu exit $?"
ncu -i $OUT/new_e4m3.ncu-rep --page details > $OUT/new_e4m3.details.txt 2>&1
ncu -i $OUT/new_e4m3.ncu-rep --page source --print-source sass --csv > /tmp/src.csv 2>&1
gzip -c /tmp/src.csv > $OUT/new_e4m3.source.csv.gz
rm -f $OUT/new_e4m3.ncu-rep
grep -E "Duration|Issue Slots Busy|Eligible Warps|No Eligible|Warp Cycles Per Issued|Executed Ipc A|Achieved Occupancy|DRAM Throughput|Registers Per|Executed Instructions  |Block Limit Reg|Block Limit Shared" $OUT/new_e4m3.details.txt | head -30
echo "total: $((SECONDS - start)) s"
