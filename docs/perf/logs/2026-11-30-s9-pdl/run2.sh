#!/bin/bash
# Device call 2 (session 9, PDL; run again as call 3 with the stream chains gated, see commit3.txt): the reordered [pdl] chains (every step reads what the step
# right before it writes; step 7 rewrites the indices step 6 reads) on the f03eb09 library, one
# process per case, no compile allowed, and memcheck of the small chain; then the same chains
# with a negative control: a library whose RoPE kernel lacks its GridDependencyWait (build-rope-neg,
# HEAD's tree with that one line deleted), which the chains must catch.
sec() { echo "==== $* ($(date +%T))"; }
L=${OUT:-/tmp}/s9c; mkdir -p $L
cp docs/perf/logs/2026-11-30-s9-pdl/commit3.txt $L/
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
for d in build-rope-stage build-rope-neg; do
  export FLASHJIT_CACHE_DIR=$PWD/$d/gpu-cache LD_LIBRARY_PATH=$PWD/$d FLASHJIT_LIBRARY=$PWD/$d/libflashjit.so
  for t in "pdl: small layer-op chain back to back" "pdl: large layer-op chain back to back" \
           "pdl: layer-op chain captured in a CUDA graph and replayed"; do
    sec "$d: $t"
    timeout 60 $d/flashjit_gpu_tests --durations yes "$t" > $L/case.log 2>&1; echo "exit $?"
    grep -E "FAILED|with expansion|non_finite|rel_l2|: rel|got_|==|passed|failed|s: " $L/case.log | head -40
  done
  [ $d = build-rope-stage ] && { sec "memcheck: $d small chain"
    timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $d/flashjit_gpu_tests \
      "pdl: small layer-op chain back to back" 2>&1 | tail -3; echo "memcheck exit: ${PIPESTATUS[0]}"; }
done > $L/tests2.log 2>&1
rm -f $L/case.log
grep -E "^====|^exit|memcheck exit|ERROR SUMMARY|test cases" $L/tests2.log
