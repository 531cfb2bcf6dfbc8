#!/bin/bash
# Stages build-decode for a device call: the dry runs compile every kernel the call launches
# (the decode GPU cases; bench_decode in each form the run script uses), then the stage copy.
set -e
B=build-decode; S=build-decode-stage
export FLASHJIT_CACHE_DIR=$PWD/$B/gpu-cache FLASHJIT_ARCH=sm_90a
sh=16x4096,64x1024,16x1024,256x1024,1x1024,1x4096,1x16384,16x16384,16x32768,64x4096,e4m3:16x4096,e4m3:256x1024
st=16x4096,64x1024,16x1024,256x1024,16x16384
FLASHJIT_DRY_RUN=1 $B/tests/flashjit_gpu_tests "[decode]" | tail -2
# call 1: --l2-keep 0|1 with and without FLASHJIT_DECODE_CLUSTER=0; call 2: --l2-keep x
# --fast-index y; call 3: --fast-index 0|1 over every shape; call 4 (this tree): also auto
all=1x1024,1x4096,1x16384,1x32768,16x1024,16x4096,16x16384,16x32768,64x1024,64x4096,64x16384,64x32768,256x1024,256x4096,256x16384,256x32768,e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024
for fast in auto 1 0; do
  $B/tools/bench/flashjit_bench_decode --dry-run --shapes $all --fast-index $fast
  $B/tools/bench/flashjit_bench_decode --dry-run --shapes $st --fast-index $fast --stamps /tmp/dry-stamps.txt
done
$B/flashjit cache prune
rm -rf $S && mkdir -p $S && cp -a $B/tests/flashjit_gpu_tests $B/tools/bench/flashjit_bench_decode $B/flashjit $B/libflashjit.so* $S/
cp -a $B/gpu-cache $S/ && rm -rf $S/gpu-cache/locks && strip --strip-unneeded $S/flashjit_* 2>/dev/null || true
git rev-parse HEAD > $S/commit.txt
du -sh $S
python3 -c "import sqlite3;print('kernels', sqlite3.connect('$S/gpu-cache/kernels.db').execute('select count(*) from kernels').fetchone()[0])"
