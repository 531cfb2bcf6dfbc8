# Session 19, call 3 (diagnostic, no code change; the staged final tree e1fccb0): Nsight Compute
# on the decode kernel, fp8 (e4m3) base B=256 L=1k against L=16k (same plan shape: 2048 CTAs,
# 16 against 256 tiles each) and bf16 B=256 L=1k: is fp8 at short contexts bound by issue, and
# where do its warps stall? Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
N="ncu --clock-control none --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis -k regex:^flashjit_decode$"
timeout 200 $N -o $OUT/ncu-fp8 $S/flashjit_bench_decode --once --kv e4m3 --configs base --lengths 1024,16384 --shapes base:e4m3:256x1024,base:e4m3:256x16384,base:e4m3:64x1024 2>&1 | tail -5
timeout 120 $N -o $OUT/ncu-bf16 $S/flashjit_bench_decode --once --configs base --lengths 1024 --shapes base:256x1024 2>&1 | tail -5
for r in fp8 bf16; do ncu --import $OUT/ncu-$r.ncu-rep --page details > $OUT/ncu-$r.txt 2>&1; done
grep -E "Duration|Executed Ipc A|Issue Slots Busy|Issued Warp Per|No Eligible|Active Warps Per|Eligible Warps|Memory Throughput|DRAM Throughput|Executed Instructions  |Warp Cycles Per Issued|Registers Per|Achieved Occupancy" $OUT/ncu-*.txt | head -80
