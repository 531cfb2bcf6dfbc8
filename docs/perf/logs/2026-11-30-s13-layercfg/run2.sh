# Session 13 "layercfg" call 2: the two chooser changes (norm threads by 16-byte units for rows of
# narrower accesses; RoPE slots where 8 leave threads idle or the batch is small), checked and
# timed: the [norm] and [rope] GPU cases (JIT disabled, 0 compiles), memcheck on the new small
# cases, the A/B lists (previous pick forced vs the chooser's, two interleaved rounds), and the
# --models rows up to 256 tokens again (call 1's synced figures there included buffer creation).
S=build-layercfg-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s13layercfg2; rm -rf $L; mkdir -p $L
cat $S/commit.txt > $L/commit.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv > $L/device.txt 2>&1
date -u +%T > $L/steps.txt
timeout 150 $S/flashjit_gpu_tests "[norm],[rope]" -d yes > $L/tests.log 2>&1; echo "tests rc $? $(date -u +%T)" | tee -a $L/steps.txt
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests \
  "rmsnorm: hidden sizes not a multiple of 8*,rope: every form*" > $L/memcheck.log 2>&1; echo "memcheck rc $? $(date -u +%T)" | tee -a $L/steps.txt
for b in norm rope; do
  (cd $L && OUT=$L timeout 60 $OLDPWD/$S/flashjit_bench_$b --ab > $L/ab_$b.log 2>&1); echo "ab $b rc $? $(date -u +%T)" | tee -a $L/steps.txt
done
for b in norm rope activation page; do
  (cd $L && OUT=$L timeout 40 $OLDPWD/$S/flashjit_bench_$b --models --max-tokens 256 > $L/models_$b.log 2>&1); echo "models $b rc $? $(date -u +%T)" | tee -a $L/steps.txt
done
tar czf $OUT/logs2.tgz -C $L .
grep -E "^(PASS|FAIL)|test cases|assertions|engine:" $L/tests.log | tail -25
tail -4 $L/memcheck.log
grep -E "ab[01]" $L/ab_norm.log | awk '{print $1, $2, $3, $4, $5, $6}' | head -0
cut -f1,2,6 $L/rmsnorm.tsv $L/layernorm.tsv $L/qk_rmsnorm.tsv $L/gemma_rmsnorm.tsv $L/fused_add_rmsnorm.tsv $L/rope_pos_ids.tsv 2>/dev/null | grep ab | sed 's/back-to-back/b2b/; s/TB\/s//g' | cut -c1-150
