# Session 12, lead: is B=256 L=32k's queued figure (≈ 5 % above synced and b2b in sessions 11 and
# 12) a property of the spin that precedes each queued call? The same shape with spins of 30 µs,
# 500 µs and 2 ms (FLASHJIT_BENCH_SPIN_US; default: max(30 µs, 4 × the warm-up's longest host
# enqueue)), twice each, beside B=64 L=32k as a control.
S=build-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
for round in 1 2; do
  for spin in default 30 500 2000; do
    echo "== round $round spin $spin"
    if [ $spin = default ]; then
      timeout 60 $S/flashjit_bench_decode --shapes 256x32768,64x32768 2>&1 | grep "^decode"
    else
      FLASHJIT_BENCH_SPIN_US=$spin timeout 60 $S/flashjit_bench_decode --shapes 256x32768,64x32768 2>&1 | grep "^decode"
    fi
  done
done
