# Session 27, call 1: 16-bit keys with RoPE turned in registers at D 128 (as fp8's since session
# 26), where each warp rotated its 16 rows in shared memory before ldmatrix. Forms, four rounds
# interleaved (new old old new new old old new): old (ed8fc05, build-mini-old) and new (this
# tree, build-mini-new); configurations rope (32/8, D 128) and rope256 (16/8, D 256: unchanged
# path, the noise control), bf16 and e4m3 caches. Then Nsight Compute on bf16 rope B=64 L=16k
# (both forms), every decode GPU case (8 processes, JIT disabled, no compile allowed), and
# memcheck / racecheck on the RoPE cases. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-mini-old.tar.gz
tar xzf build-pack/build-mini-new.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new old old new new old old new; do
  ((++r))
  N=$PWD/build-mini-old; [ $form = new ] && N=$PWD/build-mini-new
  for kv in bf16 e4m3; do
    K=""; [ $kv = e4m3 ] && K="--kv e4m3"
    echo "==== $kv $form round $r ($(date +%T))" >> $OUT/ab.log
    LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
      timeout 150 $N/flashjit_bench_decode $K --configs rope,rope256 $G >> $OUT/ab.log 2>&1
    echo "exit $?" >> $OUT/ab.log
  done
done
echo "ab: $((SECONDS - start)) s"
grep -c "^decode" $OUT/ab.log
L=/tmp/s27; rm -rf $L; mkdir -p $L
for form in old new; do
  N=$PWD/build-mini-$form
  LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 timeout 120 \
    ncu --clock-control none --kernel-name regex:flashjit_decode --launch-count 1 --set full \
    --import-source no -f \
    -o $L/ncu_$form $N/flashjit_bench_decode --configs rope --batches 64 --lengths 16384 --once \
    > $L/ncu_$form.log 2>&1
  echo "ncu $form exit $?"
  ncu -i $L/ncu_$form.ncu-rep --page details > $OUT/ncu_$form.details.txt 2>&1
  grep -E "Duration|Executed Ipc A|Issue Slots Busy|Registers Per|DRAM Throughput|Executed Instructions " $OUT/ncu_$form.details.txt | head -8
done
echo "ncu: $((SECONDS - start)) s"
N=$PWD/build-mini-new
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c > $L/cases_summary.txt
echo "cases: $((SECONDS - start)) s"
for t in "batch decode: RoPE at every head dim and KV dtype" "batch decode: persistent grid, short units and merges" "single decode: dtypes and head dims"; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "$t" > $L/memcheck_$(echo "$t" | md5sum | cut -c1-8).log 2>&1; echo "memcheck exit $? $t"
done
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: RoPE at every head dim and KV dtype" > $L/racecheck.log 2>&1; echo "racecheck exit $?"
for f in $L/memcheck_*.log $L/racecheck.log; do tail -n 2 "$f"; done
for f in $L/case_*.log; do grep -q "FAILED" $f && head -c 6000 $f > $OUT/failed_$(basename $f); done
rm -f $L/*.ncu-rep
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
