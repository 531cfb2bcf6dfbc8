# Adds the kernels of cases.txt (seed 1) to STAGE's cache. Usage: stage_tests.sh BUILD STAGE
set -e
B=$1; S=$2; C=$PWD/$S-cache
export FLASHJIT_CACHE_DIR=$C FLASHJIT_ARCH=sm_90a FLASHJIT_TEST_SEED=1
while read -r c; do FLASHJIT_DRY_RUN=1 $B/tests/flashjit_gpu_tests "$c" | tail -1; done < docs/perf/logs/2026-11-30-s14-lazy/cases.txt
rm -rf $S/gpu-cache && cp -a $C $S/gpu-cache && rm -rf $S/gpu-cache/locks
