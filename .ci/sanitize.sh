#!/usr/bin/env bash
# CI, second job: the CPU unit tests built with AddressSanitizer + UndefinedBehaviorSanitizer
# (FLASHJIT_SANITIZE=ON). Builds only the unit tests and the CLI they run, in build-asan/.
# NVRTC is closed source and keeps allocations until exit: leak checking is off; every other
# ASan/UBSan report fails the job.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
# --as-needed: CUDA::nvrtc drags in the driver stub; the driver must stay a lazy dlopen (Debian's
# gcc links --as-needed by default, other toolchains do not).
# -O1 -g1: the sanitizers keep their checks and line tables; the build stays short on 2 cores.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1" -DFLASHJIT_SANITIZE=ON \
  "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed" "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,--as-needed" >/dev/null
cmake --build build-asan -j"$jobs" --target flashjit_unit_tests flashjit_cli
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export FLASHJIT_LOG_LEVEL=error
# Catch2 directly (not ctest): one process, the sanitizers see every test. The reliability tests
# that fork the CLI run it sanitized too.
./build-asan/tests/flashjit_unit_tests --order rand --rng-seed 1 "~[gpu]"
