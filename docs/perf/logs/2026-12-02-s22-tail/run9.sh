# Session 22, call 9: the final tree (two-wave plans cut tails only at 192 tiles a wave). The two
# tail GPU cases, memcheck on the small one, and B=64 L=8k / 32k and B=16 L=32k once (the first
# now left uncut). The stage: call 8's with this tree's binaries copied in.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
unset FLASHJIT_DECODE_TAIL
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
timeout 120 $N/flashjit_gpu_tests "batch decode: tail pieces*" 2>&1 | tail -3 | tee $OUT/tests.log
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: tail pieces small" 2>&1 | tail -2 | tee $OUT/memcheck.log
timeout 60 $N/flashjit_bench_decode --batches 16,64 --lengths 8192,32768 --shapes 64x8192,64x32768,16x32768 --plan 2>&1 | grep "^decode\|^plan" | cut -c1-170 | tee $OUT/bench.log
