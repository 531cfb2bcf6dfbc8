# Session 23, call 3: tail pieces on fp8 (e4m3) caches over the production configurations. Every
# fp8 shape the 3 % rule cuts (44 shapes of 10 configurations x 4-256 requests x 8k-32k keys;
# plans of one wave of >= 96 tiles a slot on 396 slots), forms def (uncut, today's default) and 3
# (FLASHJIT_DECODE_TAIL=3), three rounds each, one process a round; then the base shapes at 5 % and
# 8 %, two rounds. JIT disabled (the stage holds every variant).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
SH=$(cat docs/perf/logs/2026-12-02-s23-check/fp8_cut_shapes.txt)
r=0
for t in def 3 3 def def 3; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== tail $t round $((++r)) ($(date +%T))" >> $OUT/ab.log
  timeout 120 $N/flashjit_bench_decode --kv e4m3 \
    --configs base,tp8,tp4,qwen7b,gemma2,mha,d64,page1,page64,f16 \
    --batches 4,8,16,24,32,48,64,128 --lengths 8192,16384,32768 --shapes "$SH" >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
done
echo "configs: $((SECONDS - start)) s"
B="e4m3:16x32768,e4m3:24x16384,e4m3:24x32768,e4m3:48x8192,e4m3:48x16384,e4m3:48x32768,e4m3:8x32768,e4m3:32x32768"
for t in 5 8 def 3 8 5; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== base tail $t round $((++r)) ($(date +%T))" >> $OUT/ab.log
  timeout 60 $N/flashjit_bench_decode --kv e4m3 --batches 8,16,24,32,48 \
    --lengths 8192,16384,32768 --shapes $B >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
done
unset FLASHJIT_DECODE_TAIL
grep "^====\|^exit" $OUT/ab.log
grep -c "^decode" $OUT/ab.log
echo "total: $((SECONDS - start)) s"
