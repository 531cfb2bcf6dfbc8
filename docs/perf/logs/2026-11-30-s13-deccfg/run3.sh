#!/bin/bash
# Session 13 deccfg, device call 3 (final tree 262b5bf+: the plan model kept, D 256 at 2 stages
# again): the production-configuration cases and the head-dim case (no compile allowed),
# memcheck of the small case, then bench_decode's gemma2 and tp8 rows (the kept state).
S=$PWD/build-deccfg-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/deccfg3; mkdir -p $L; cp $S/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
{ for n in "batch decode: production configurations" "batch decode: production configurations small" "batch decode: dtypes\, head dims\, knobs"; do
    sec "$n"; timeout 60 $S/flashjit_gpu_tests "$n" 2>&1 | grep -E "passed|failed|FAILED|^engine"; echo "exit ${PIPESTATUS[0]}"
  done
  sec "memcheck small"; timeout 40 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: production configurations small" 2>&1 | tail -3; echo "memcheck exit: ${PIPESTATUS[0]}"
  sec bench; timeout 40 $S/flashjit_bench_decode --configs gemma2,tp8; echo "exit $?"
  sec done; } > $L/all.log 2>&1
(cd $L && tar czf ${OUT:-/tmp}/deccfg3.tgz .)
grep -vE "^decode" $L/all.log
awk '/^decode /{printf "%s B=%s L=%s %s %s %s\n", $2, substr($4,3), substr($5,3), $6, $(NF-9), $(NF-3)}' $L/all.log
