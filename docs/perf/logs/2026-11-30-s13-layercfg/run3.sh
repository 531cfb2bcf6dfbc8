# Session 13 "layercfg" call 3: two more norm chooser rules from call 2's A/B (LayerNorm capped at
# 256 threads for 8192 < hidden <= 16384; QK-norm with 5-8 accesses per row: 8 threads x 1 access,
# 32 rows per block, one block per group), checked: the [norm] GPU cases but the forced-variant
# sweep (the chooser does not reach it), memcheck on the new case, and the A/B (--ab2).
S=build-layercfg-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s13layercfg3; rm -rf $L; mkdir -p $L
cat $S/commit.txt > $L/commit.txt
date -u +%T > $L/steps.txt
timeout 80 $S/flashjit_gpu_tests "[norm] ~*swept*" -d yes > $L/tests.log 2>&1; echo "tests rc $? $(date -u +%T)" | tee -a $L/steps.txt
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests \
  "layernorm above hidden 8192*" > $L/memcheck.log 2>&1; echo "memcheck rc $? $(date -u +%T)" | tee -a $L/steps.txt
(cd $L && OUT=$L timeout 40 $OLDPWD/$S/flashjit_bench_norm --ab2 > $L/ab2_norm.log 2>&1); echo "ab2 rc $? $(date -u +%T)" | tee -a $L/steps.txt
tar czf $OUT/logs3.tgz -C $L .
grep -E "test cases|engine:" $L/tests.log | tail -3; grep -c "^[0-9.]* s: " $L/tests.log
tail -2 $L/memcheck.log
cut -f1,2,6 $L/layernorm.tsv $L/qk_rmsnorm.tsv 2>/dev/null | sed 's/back-to-back/b2b/; s/TB\/s//g' | cut -c1-140
