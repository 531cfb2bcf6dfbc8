# Call 1: rows per lane group 1 / 2 / 4 (FLASHJIT_MERGE_ROWS: an experiment not kept; docs/perf/cascade.md, Session 7).
set -u
S=build-lead-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so
git rev-parse HEAD > $OUT/commit.txt
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for r in 1 2 4; do echo "== tests rows $r"; FLASHJIT_MERGE_ROWS=$r FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 $S/flashjit_gpu_tests "[cascade]" | tail -3; done
for r in 1 2 4 1 2 4; do echo "== bench rows $r"; FLASHJIT_MERGE_ROWS=$r FLASHJIT_DISABLE_JIT=1 timeout 60 $S/flashjit_bench_cascade; done
echo "== torch"; timeout 90 python3 tools/bench/torch_cascade.py
echo "== memcheck rows 4"; FLASHJIT_MERGE_ROWS=4 FLASHJIT_DISABLE_JIT=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "[cascade]" 2>&1 | tail -3
} > $OUT/log.txt 2>&1
tail -c 11000 $OUT/log.txt
