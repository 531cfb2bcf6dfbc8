#!/usr/bin/env bash
# Session 31: stages both sides of run1.sh / run2.sh (no device was lent in session 31, so
# they did not run). Run from the repository root on a tree without the patch applied:
#   B (build-old): this tree as it is, the library, decode bench and its prewarmed kernels;
#   A (build-stage): this tree with unroll-offsets.patch applied, staged whole
#     (tools/gpu-full-run.sh stage), then the patch is taken back out of the working tree.
# Then:  run with carry ["build-pack"]:  bash docs/perf/logs/2026-12-08-s31-unroll/run1.sh REV
# About 20 min on 2 cores from a fresh checkout (two library builds and the suite's prewarm),
# 8-11 min with build/ warm.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
here=docs/perf/logs/2026-12-08-s31-unroll
old=$(mktemp -d)/old
git worktree add --detach "$old" HEAD
cmake -S "$old" -B "$old/build" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$old/build" -j"$(nproc)" --target flashjit_cli flashjit_bench_decode > /dev/null
(
  export FLASHJIT_CACHE_DIR="$old/build/gpu-cache" FLASHJIT_ARCH=sm_90a
  b="$old/build/tools/bench/flashjit_bench_decode"
  "$b" --dry-run > /dev/null
  "$b" --dry-run --configs rope,d64,gemma2,page64,page1 > /dev/null
  "$b" --dry-run --kv e4m3 --configs base,tp8,qwen7b,d64 > /dev/null
  "$b" --dry-run --page-size 32 > /dev/null
)
pack=$(mktemp -d)
mkdir -p "$pack/build-old" build-pack
cp -a "$old"/build/libflashjit.so* "$old/build/tools/bench/flashjit_bench_decode" "$pack/build-old/"
cp -a "$old/build/gpu-cache" "$pack/build-old/gpu-cache"
rm -rf "$pack/build-old/gpu-cache/locks"
(cd "$pack" && tar czf - build-old) > build-pack/build-old.tar.gz
git worktree remove --force "$old"
git apply "$here/unroll-offsets.patch"
trap 'git apply -R "$here/unroll-offsets.patch"' EXIT
cmake -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)" > /dev/null
# the occupancy case checks the patch's register table against the compiled kernels
build/tests/flashjit_unit_tests "decode plans: the resident CTAs an SM match the compiled kernels"
tools/gpu-full-run.sh stage build build-stage
FLASHJIT_CACHE_DIR="$PWD/build-stage/gpu-cache" FLASHJIT_ARCH=sm_90a \
  build/tools/bench/flashjit_bench_decode --dry-run --page-size 32 > /dev/null
rm -rf build-stage/gpu-cache/locks
tar czf build-pack/build-stage.tar.gz build-stage
du -sh build-pack/*
