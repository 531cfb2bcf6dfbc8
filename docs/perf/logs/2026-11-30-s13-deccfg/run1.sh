#!/bin/bash
# Session 13 deccfg, device call 1 (measure everything, change nothing): bench_decode over the
# named configurations (with --plan), cuDNN (torch_decode.py --configs) in the same call, a second
# bench run (run-to-run view), then the stamps pass (per-CTA timestamps) over the same shapes.
S=$PWD/build-deccfg-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
CFGS=base,tp8,tp4,qwen7b,gemma2,gemma2w,mha,d64,page1,page64,f16
L=/tmp/deccfg1; mkdir -p $L; cp $S/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
pack() { (cd $L && tar czf ${OUT:-/tmp}/deccfg1.tgz .); }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv,noheader
  sec "bench round 1"; timeout 70 $S/flashjit_bench_decode --plan --configs $CFGS; echo "exit $?"
  sec "torch decode (cudnn)"; timeout 90 python3 tools/bench/torch_decode.py --backends cudnn --configs $CFGS; echo "exit $?"
  pack
  sec "bench round 2"; timeout 60 $S/flashjit_bench_decode --configs $CFGS; echo "exit $?"
  pack
  sec "stamps"; timeout 60 $S/flashjit_bench_decode --configs $CFGS --stamps $L/stamps.txt; echo "exit $?"
  sec done; } > $L/bench.log 2>&1
gzip $L/stamps.txt; pack
grep -E "^====|exit [1-9]|rror" $L/bench.log | head -20
awk '/^==== bench round 1/{r=1} /^==== torch/{r=0} r && /^decode /{printf "%s %s %s %s %s %s %s\n",$2,$4,$5,$6,$(NF-9),$(NF-3),$(NF-7)}' $L/bench.log | head -140
