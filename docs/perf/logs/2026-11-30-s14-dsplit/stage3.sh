# Session 14 lead, call 3: the soft cap without tanhf and a division per score. Stages the decode
# cases that run soft-capped variants (and the D 256 forms), and the benches of shapes3.txt in
# both D 256 forms.
set -e
S=build-ds-stage; C=$PWD/build-ds-cache; D=docs/perf/logs/2026-11-30-s14-dsplit
rm -rf $S $C; mkdir -p $S build-pack
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a
while read -r c; do FLASHJIT_DRY_RUN=1 build/tests/flashjit_gpu_tests "$c" | tail -1; done < $D/cases3.txt
for env in "" "FLASHJIT_DECODE_D_SPLIT=0"; do
  while read -r args; do env $env build/tools/bench/flashjit_bench_decode --dry-run $args > /dev/null; done < $D/shapes3.txt
done
cp -a build/tests/flashjit_gpu_tests build/tools/bench/flashjit_bench_decode build/flashjit build/libflashjit.so* $S/
cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
strip --strip-unneeded $S/flashjit_* $S/libflashjit.so.*.*.* 2>/dev/null || true
tar czf build-pack/build-ds-stage.tar.gz $S && du -sh build-pack/build-ds-stage.tar.gz
