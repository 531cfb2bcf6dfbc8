# Call 4: kChunks vectors per state per lane (FLASHJIT_MERGE_CHUNKS 1 / 2 / 4): tests and bench per
# form, then one ncu profile of chunks 2 at seq 16384.
set -u
S=build-lead-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
git rev-parse HEAD > $OUT/commit.txt
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for c in 1 2 4; do echo "== tests chunks $c"; FLASHJIT_MERGE_CHUNKS=$c FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 $S/flashjit_gpu_tests "[cascade]" | tail -4; done
for c in 1 2 4 1 2 4; do echo "== bench chunks $c"; FLASHJIT_MERGE_CHUNKS=$c FLASHJIT_DISABLE_JIT=1 timeout 60 $S/flashjit_bench_cascade; done
} > $OUT/log.txt 2>&1
FLASHJIT_MERGE_CHUNKS=2 FLASHJIT_DISABLE_JIT=1 timeout 60 ncu -k regex:merge_state --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  $S/flashjit_bench_cascade --once > $OUT/ncu-chunks2.txt 2>&1
grep -E "==|passed|failed|merge_state|device_copy" $OUT/log.txt | cut -c1-150
grep -E "Duration|Throughput|Registers Per|Achieved Occupancy|Issued Ipc|Warp Cycles Per Issued" $OUT/ncu-chunks2.txt
