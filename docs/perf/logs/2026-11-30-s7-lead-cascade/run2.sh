# Call 2: the cp.async-pipelined merge (stages 4 / 8) against the one-round-trip form (stages 0).
set -u
S=build-lead-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
git rev-parse HEAD > $OUT/commit.txt
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for r in 0 4 8; do echo "== tests stages $r"; FLASHJIT_MERGE_STAGES=$r FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 $S/flashjit_gpu_tests "[cascade]" | tail -3; done
for r in 0 4 8 0 4 8; do echo "== bench stages $r"; FLASHJIT_MERGE_STAGES=$r FLASHJIT_DISABLE_JIT=1 timeout 60 $S/flashjit_bench_cascade; done
echo "== torch"; timeout 90 python3 tools/bench/torch_cascade.py
for r in 4 8; do echo "== memcheck stages $r"; FLASHJIT_MERGE_STAGES=$r FLASHJIT_DISABLE_JIT=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "[cascade]" 2>&1 | tail -3; done
echo "== racecheck stages 8"; FLASHJIT_MERGE_STAGES=8 FLASHJIT_DISABLE_JIT=1 timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "[cascade]" 2>&1 | tail -3
} > $OUT/log.txt 2>&1
grep -E "==|passed|failed|merge_state|device_copy|ERROR|hazard" $OUT/log.txt | cut -c1-150 | tail -c 11000
