# Session 26, call 6: the final tree (f73b414: call 5's read-ahead reverted, so the fp8 RoPE
# kernels at D 64 / 128 are 4c4b82a's; the other 42 decode kernels' cubins are bit-identical to
# call 5's staged ones, compared by sha256 here). Every decode GPU case (8 processes, JIT
# disabled, no compile allowed) and memcheck on the RoPE and fp8 cases. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-mini5.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
N=$PWD/build-mini5
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s26f; rm -rf $L; mkdir -p $L
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
