# NOT RUN in session 23 (the device budget was spent): a ready script for the next session.
# Session 23, call 8 (diagnostic): fp8 at D 256 (gemma2: 16/8 heads, soft cap) with more CTAs than
# the plan's 132 slots. Its kernel's 255 registers x 128 threads fit twice in an SM's 64 K, so the
# GPU may hold two CTAs an SM where the plan counts one. Forced chunks (FLASHJIT_DECODE_CHUNK)
# 8192 / 4096 / 2048 against the default plan, two rounds. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
unset FLASHJIT_DECODE_TAIL
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
SH=gemma2:e4m3:16x16384,gemma2:e4m3:8x16384,gemma2:e4m3:4x32768
r=0
for ch in def 8192 4096 2048 2048 4096 8192 def; do
  if [ "$ch" = def ]; then unset FLASHJIT_DECODE_CHUNK; else export FLASHJIT_DECODE_CHUNK=$ch; fi
  echo "==== chunk $ch round $((++r))" >> $OUT/ab.log
  timeout 30 $N/flashjit_bench_decode --kv e4m3 --configs gemma2 --batches 4,8,16 --lengths 16384,32768 --shapes $SH --plan >> $OUT/ab.log 2>&1
done
grep "^====\|^decode\|^plan" $OUT/ab.log | cut -c1-175
