# Session 23, call 7 (diagnostic): where fp8 at D 256 spends a CTA's time. Calls 3-4 found gemma2's
# fp8 plans (16/8 heads, D 256, soft cap, one CTA an SM) 27-28 % slower with tail pieces of 8
# tiles, bf16 1-3 %. Per-CTA stamps (entry, first copies issued, first tile landed, end) of the
# default plans: gemma2 fp8 and bf16 at B=1 / B=16 L=16k, base fp8 beside them. JIT disabled.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1
unset FLASHJIT_DECODE_TAIL
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
timeout 60 $N/flashjit_bench_decode --kv e4m3 --configs gemma2,base --batches 1,16 --lengths 16384 --plan --stamps $OUT/stamps_fp8.txt > $OUT/bench.log 2>&1; echo "exit $?"
timeout 60 $N/flashjit_bench_decode --configs gemma2 --batches 1,16 --lengths 16384 --plan --stamps $OUT/stamps_bf16.txt >> $OUT/bench.log 2>&1; echo "exit $?"
grep -v "^$" $OUT/bench.log | cut -c1-230
