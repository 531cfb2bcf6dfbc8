# Session 25, call 1: decode with RoPE inside the kernel, the new rotation (a per-CTA table of the
# D/2 frequencies in turns, formed in double; rope::CosSinTurns's exact whole-turn reduction and
# __sincosf; 16-byte row accesses; fp8 keys converted and rotated in one pass) against the old
# (exp2f and the accurate sincosf per key and dim, element by element: build-old, session 24's
# tree, its own cache of the RoPE kernels). Configurations rope (32/8 heads, D 128) and rope256
# (16/8, D 256), bf16 and fp8 (e4m3) caches, two rounds a form interleaved. Then every decode
# GPU case (8 processes, JIT disabled, no compile allowed) and memcheck on the RoPE cases.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
tar xzf build-pack/build-old.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new old old new; do
  ((++r))
  N=$PWD/build-stage
  [ $form = old ] && N=$PWD/build-old
  for kv in bf16 e4m3; do
    K=""
    [ $kv = e4m3 ] && K="--kv e4m3"
    echo "==== $kv $form round $r ($(date +%T))" >> $OUT/rope_ab.log
    LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
      timeout 150 $N/flashjit_bench_decode $K --configs rope,rope256 $G >> $OUT/rope_ab.log 2>&1
    echo "exit $?" >> $OUT/rope_ab.log
  done
done
echo "rope ab: $((SECONDS - start)) s"
grep -c "^decode" $OUT/rope_ab.log
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s25; rm -rf $L; mkdir -p $L
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c > $L/cases_summary.txt
cat $L/cases_summary.txt | head -40
echo "cases: $((SECONDS - start)) s"
for t in "batch decode: dtypes\, head dims\, knobs" "single decode: dtypes*"; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "$t" > $L/memcheck_$(echo "$t" | md5sum | cut -c1-8).log 2>&1; echo "memcheck exit $? $t"
done
tail -2 $L/memcheck_*.log
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
