# Session 25, call 4: fp8 decode with RoPE, values through the register path. Until now both K
# and V of an fp8 cache with RoPE went through 16-bit rows in shared memory; now only the keys do
# (converted and rotated), V is read from the fp8 tile into f16 fragments as without RoPE, and the
# smaller shared memory lets D 256 hold two CTAs an SM (plans: 264 slots). Forms, two rounds each,
# interleaved: s25a (3a352eb) and new (the final tree), configurations rope (32/8, D 128) and
# rope256 (16/8, D 256), e4m3 and bf16 caches (bf16: kernels unchanged, the noise control). Then
# every decode GPU case (8 processes, JIT disabled, no compile allowed) and memcheck on the RoPE
# and fp8 cases. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
tar xzf build-pack/build-s25a.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new s25a s25a new; do
  ((++r))
  N=$PWD/build-$form
  [ $form = new ] && N=$PWD/build-stage
  for kv in e4m3 bf16; do
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
echo "cases: $((SECONDS - start)) s"
for t in "batch decode: RoPE at every head dim and KV dtype" "batch decode: fp8 KV*"; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "$t" > $L/memcheck_$(echo "$t" | md5sum | cut -c1-8).log 2>&1; echo "memcheck exit $? $t"
done
for f in $L/memcheck_*.log; do tail -n 2 "$f"; done
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
