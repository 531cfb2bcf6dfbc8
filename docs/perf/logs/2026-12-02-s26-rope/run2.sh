# Session 26, call 2: fp8 keys with RoPE turned in registers (D <= 128), on their way from the
# fp8 tile into the B fragments, where they were converted and rotated into 16-bit rows in
# shared memory. Forms, two rounds each, interleaved: old (1694734, build-mini) and new (this
# tree, build-mini2), configurations rope (32/8, D 128) and rope256 (16/8, D 256: unchanged
# path, the noise control), e4m3 and bf16 caches. Then every decode GPU case (8 processes, JIT
# disabled, no compile allowed) and memcheck on the RoPE and fp8 cases. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-mini.tar.gz
tar xzf build-pack/build-mini2.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new old old new; do
  ((++r))
  N=$PWD/build-mini; [ $form = new ] && N=$PWD/build-mini2
  for kv in e4m3 bf16; do
    K=""; C="--configs rope"
    [ $kv = e4m3 ] && K="--kv e4m3" && C="--configs rope,rope256"
    echo "==== $kv $form round $r ($(date +%T))" >> $OUT/ab.log
    LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
      timeout 150 $N/flashjit_bench_decode $K $C $G >> $OUT/ab.log 2>&1
    echo "exit $?" >> $OUT/ab.log
  done
done
echo "ab: $((SECONDS - start)) s"
grep -c "^decode" $OUT/ab.log
N=$PWD/build-mini2
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s26; rm -rf $L; mkdir -p $L
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
for f in $L/case_*.log; do grep -q "FAILED" $f && head -c 6000 $f > $OUT/failed_$(basename $f); done
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
