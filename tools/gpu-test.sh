#!/usr/bin/env bash
# The GPU loop: prewarm on a CPU machine, run on a GPU machine with no NVRTC compile there.
#
#   tools/gpu-test.sh prewarm [BUILD]   build (Release), then run the GPU tests and benchmarks in
#                                       dry-run mode (FLASHJIT_DRY_RUN=1, FLASHJIT_ARCH=sm_90a):
#                                       every kernel they use is compiled into BUILD/gpu-cache.
#   tools/gpu-test.sh run [BUILD]       on the GPU machine: GPU tests with FLASHJIT_DISABLE_JIT=1
#                                       and FLASHJIT_EXPECT_NO_COMPILE=1 (a miss fails the run),
#                                       then compute-sanitizer memcheck when available.
#   tools/gpu-test.sh bench [BUILD]     on the GPU machine: the benchmarks (tools/bench/).
#
# Logs go to $OUT (when set) or BUILD/gpu-logs.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}
build=${2:-build}
arch=${FLASHJIT_ARCH:-sm_90a}
logs=${OUT:-$build/gpu-logs}
mkdir -p "$logs"
export FLASHJIT_CACHE_DIR="$PWD/$build/gpu-cache"

case "$mode" in
  prewarm)
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j"$(nproc)"
    export FLASHJIT_DRY_RUN=1 FLASHJIT_ARCH="$arch" FLASHJIT_TEST_SEED=1
    "$build/tests/flashjit_gpu_tests" 2>&1 | tail -3
    for b in "$build"/tools/bench/flashjit_bench_*; do
      [ -x "$b" ] && "$b" --dry-run 2>&1 | tail -1
    done
    "$build/flashjit" cache ls | tail -1
    ;;
  run)
    export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    "$build/tests/flashjit_gpu_tests" --durations yes 2>&1 | tee "$logs/gpu-tests.log"
    if [ "${MEMCHECK:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
      compute-sanitizer --tool memcheck --error-exitcode 3 "$build/tests/flashjit_gpu_tests" \
        ${MEMCHECK_FILTER:-} 2>&1 | tail -5 | tee "$logs/memcheck.log"
    fi
    ;;
  bench)
    export FLASHJIT_DISABLE_JIT=1
    for b in "$build"/tools/bench/flashjit_bench_*; do
      [ -x "$b" ] && "$b" 2>&1 | tee "$logs/$(basename "$b").log"
    done
    ;;
  *)
    echo "usage: $0 prewarm|run|bench [BUILD]" >&2
    exit 2
    ;;
esac
