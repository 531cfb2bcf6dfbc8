# Session 14 lead, call 2: the call 1 stage plus the kernels of the diagnostic shapes (D 256
# without soft cap at groups 1, 2, 16, HND, page 64; D 128 at group 2).
set -e
S=build-ds-stage; C=$PWD/build-ds-cache
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a
B=build/tools/bench/flashjit_bench_decode
while read -r args; do $B --dry-run $args > /dev/null; done < docs/perf/logs/2026-11-30-s14-dsplit/shapes2.txt
rm -rf $S/gpu-cache && cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
tar czf build-pack/build-ds-stage.tar.gz $S && du -sh build-pack/build-ds-stage.tar.gz
