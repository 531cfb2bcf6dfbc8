# Session 23, call 4: does the default tail rule (3 %, 16-bit caches) pay beyond the base
# configuration it was measured on? Call 3 found fp8 gemma2 (D 256, one CTA an SM) 27-28 % slower
# with pieces. Every bf16/f16 shape the default cuts (76 of 10 configurations x 4-256 requests x
# 8k-32k keys), tails off (FLASHJIT_DECODE_TAIL=0) against the default, three rounds each, one
# process a round; then gemma2 bf16 and fp8 with the run-time CTA index (--fast-index 0), tails off
# and on, two rounds. JIT disabled. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
SH=$(cat docs/perf/logs/2026-12-02-s23-check/bf16_cut_shapes.txt)
CF=base,tp8,tp4,qwen7b,gemma2,mha,d64,page1,page64,f16
r=0
for t in 0 def def 0 0 def; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== tail $t round $((++r)) ($(date +%T))" >> $OUT/ab.log
  timeout 150 $N/flashjit_bench_decode --configs $CF --batches 4,8,16,24,32,48,64,128,256 \
    --lengths 8192,16384,32768 --shapes "$SH" >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
done
echo "bf16: $((SECONDS - start)) s"
for t in 0 3 3 0; do
  export FLASHJIT_DECODE_TAIL=$t
  echo "==== gemma2 fi0 tail $t round $((++r)) ($(date +%T))" >> $OUT/ab.log
  timeout 60 $N/flashjit_bench_decode --fast-index 0 --configs gemma2 --batches 4,8,16 \
    --lengths 8192,16384,32768 --plan >> $OUT/ab.log 2>&1
  timeout 60 $N/flashjit_bench_decode --fast-index 0 --kv e4m3 --configs gemma2 --batches 4,8,16 \
    --lengths 8192,16384,32768 --plan >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
done
unset FLASHJIT_DECODE_TAIL
grep "^====\|^exit" $OUT/ab.log
grep -c "^decode" $OUT/ab.log
echo "total: $((SECONDS - start)) s"
