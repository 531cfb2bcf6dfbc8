# Call 3: the row split by FastDivisor; both forms timed, then one ncu profile of each at seq 16384.
set -u
S=build-lead-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
git rev-parse HEAD > $OUT/commit.txt
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for r in 0 8; do echo "== tests stages $r"; FLASHJIT_MERGE_STAGES=$r FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 $S/flashjit_gpu_tests "[cascade]" | tail -2; done
for r in 0 8 0 8; do echo "== bench stages $r"; FLASHJIT_MERGE_STAGES=$r FLASHJIT_DISABLE_JIT=1 timeout 60 $S/flashjit_bench_cascade; done
} > $OUT/log.txt 2>&1
for r in 0 8; do
  FLASHJIT_MERGE_STAGES=$r FLASHJIT_DISABLE_JIT=1 timeout 90 ncu -k regex:merge_state --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
    --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    $S/flashjit_bench_cascade --once > $OUT/ncu-stages$r.txt 2>&1
done
grep -E "==|passed|failed|merge_state |device_copy" $OUT/log.txt | cut -c1-150
for r in 0 8; do echo "== ncu stages $r"; grep -E "Duration|Throughput|Registers|Achieved Occupancy|Issued Ipc|Eligible|No Eligible|Warp Cycles Per Issued|Executed Ipc|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Stall|Block Limit|Waves" $OUT/ncu-stages$r.txt | head -40; done
