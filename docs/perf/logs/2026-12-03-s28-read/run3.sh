#!/usr/bin/env bash
# Session 28, call 4 (run3.sh): a kernel that only reads (cp.async / TMA, plain / paged, rotating over a
# 2.2 GB cache) and the multi-wave plans of B=64 L=4k and B=256 L=1k (512 x 64, 2048 x 16 tiles), beside decode
# and cuDNN SDPA on the same shapes, in one call.
set -u
export FLASHJIT_CACHE_DIR=$PWD/build/gpu-cache FLASHJIT_ARCH=sm_90a FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
S=16x1024,16x4096,64x1024,16x16384,64x4096,256x1024
OUT=$OUT build/tools/bench/flashjit_bench_sm_read > $OUT/sm_read.log 2>&1
for r in 1 2; do
  build/tools/bench/flashjit_bench_decode --shapes $S > $OUT/decode_$r.log 2>&1
done
python3 tools/bench/torch_decode.py --shapes $S --backends cudnn > $OUT/torch.log 2>&1
tail -3 $OUT/torch.log
grep -c . $OUT/sm_read.log $OUT/decode_1.log
