# Session 23, call 6: the final tree's decode (the tail rule of calls 3-5, plus pages of under 16
# keys cut in one-wave plans only from 192 tiles a slot). Every decode GPU case (8 processes, JIT
# disabled, no compile allowed), memcheck on the small tail case, the decode benchmark grid and
# PyTorch's cuDNN SDPA on the same shapes, in the same call. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
unset FLASHJIT_DECODE_TAIL
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
L=/tmp/s23; rm -rf $L; mkdir -p $L
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases\|compiles" $L/case_*.log | sort | uniq -c | sort -rn | head -5
echo "cases: $((SECONDS - start)) s"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: tail pieces small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"
tail -2 $L/memcheck.log
timeout 120 $N/flashjit_bench_decode --plan > $OUT/bench.log 2>&1; echo "bench exit $?"
timeout 150 python3 tools/bench/torch_decode.py > $OUT/torch.log 2>&1; echo "torch exit $?"
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
