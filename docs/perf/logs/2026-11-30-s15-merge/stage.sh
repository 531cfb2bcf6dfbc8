# Session 15 lead: stage one tree's decode bench (and, when built, its GPU tests) with a fresh
# cache of every kernel the call runs. Usage: stage.sh BUILD STAGE [tests] (from the repo root).
set -e
B=$1; S=$2; C=$PWD/$S-cache; D=docs/perf/logs/2026-11-30-s15-merge
rm -rf $S $C; mkdir -p $S build-pack
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a
CFGS=base,tp8,tp4,qwen7b,mha,d64,gemma2,f16
$B/tools/bench/flashjit_bench_decode --dry-run > /dev/null
$B/tools/bench/flashjit_bench_decode --dry-run --configs $CFGS > /dev/null
$B/tools/bench/flashjit_bench_decode --dry-run --configs tp8,base --shapes tp8:1x16384,base:1x16384 --stamps /dev/null > /dev/null
for k in 64 128 256 512 1024; do for m in fused kernel; do
  FLASHJIT_DECODE_MERGE=$m FLASHJIT_DECODE_CHUNK=$k $B/tools/bench/flashjit_bench_decode --dry-run --configs tp8,tp4,qwen7b,base,mha,d64,gemma2 > /dev/null
done; done
FLASHJIT_DECODE_MERGE=fused $B/tools/bench/flashjit_bench_decode --dry-run --configs $CFGS > /dev/null
FLASHJIT_DECODE_MERGE=fused $B/tools/bench/flashjit_bench_decode --dry-run > /dev/null
cp -a $B/tools/bench/flashjit_bench_decode $B/libflashjit.so* $S/
if [ "$3" = tests ]; then
  cp -a $B/tests/flashjit_gpu_tests $S/
  while read -r c; do FLASHJIT_TEST_SEED=1 FLASHJIT_DRY_RUN=1 $B/tests/flashjit_gpu_tests "$c" | tail -1; done < $D/cases.txt
fi
cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
strip --strip-unneeded $S/flashjit_* $S/libflashjit.so.*.*.* 2>/dev/null || true
du -sh $S
