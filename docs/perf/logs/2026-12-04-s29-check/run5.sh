#!/usr/bin/env bash
# Session 29, call 5: why decode loses at 6 stages where the light reading kernel gains (call 4:
# 128 CTAs x 16 tiles, 3 -> 6 stages: reading kernel 22.4 -> 20.7 µs queued, decode 23.6 ->
# 25.0). Stamps of decode's plan of one CTA a request and kv head (FLASHJIT_DECODE_CLUSTER=0)
# at 3 and 6 stages, and of the reading kernel's --lone rows (JIT allowed: the stamps variants).
set -u
[ -d build-stage ] || tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_ARCH=sm_90a LD_LIBRARY_PATH=$PWD/build-stage
cp -a build-stage/gpu-cache /tmp/cache && export FLASHJIT_CACHE_DIR=/tmp/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > $OUT/device.txt
for st in 3 6; do
  echo "== decode, no clusters, $st stages"
  FLASHJIT_DECODE_CLUSTER=0 FLASHJIT_DECODE_STAGES=$st timeout 60 build-stage/flashjit_bench_decode \
    --shapes 16x1024 --plan --stamps $OUT/decode-s$st.txt
done > $OUT/decode.log 2>&1
grep "^==\|^decode\|^stamps" $OUT/decode.log | cut -c1-260
mkdir -p $OUT/smread
FLASHJIT_SM_READ_STAMPS=$OUT/smread timeout 120 build-c/flashjit_bench_sm_read --lone > $OUT/smread.log 2>&1
grep "round 1" $OUT/smread.log | cut -c1-200
ls $OUT/smread
