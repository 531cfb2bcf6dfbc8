# Session 27, call 2: call 1's A/B again after the persistent entry's fix (975004e): old
# (ed8fc05, build-mini-old) against new (this tree, build-mini-new), bf16 rope / rope256 four
# rounds interleaved, e4m3 two; Nsight Compute's per-instruction samples of the new bf16 kernel
# (B=64 L=16k); every decode GPU case (JIT disabled, no compile allowed); memcheck on the RoPE
# and persistent cases. Argument: the commit.
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
    [ $kv = e4m3 ] && [ $r -gt 4 ] && continue
    echo "==== $kv $form round $r ($(date +%T))" >> $OUT/ab.log
    LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
      timeout 150 $N/flashjit_bench_decode $K --configs rope,rope256 $G >> $OUT/ab.log 2>&1
    echo "exit $?" >> $OUT/ab.log
  done
done
echo "ab: $((SECONDS - start)) s"
grep -c "^decode" $OUT/ab.log
L=/tmp/s27; rm -rf $L; mkdir -p $L
N=$PWD/build-mini-new
LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 timeout 150 \
  ncu --clock-control none --kernel-name regex:flashjit_decode --launch-count 1 --set full \
  --import-source no -f -o $L/ncu_new $N/flashjit_bench_decode --configs rope --batches 64 \
  --lengths 16384 --once > $L/ncu_new.log 2>&1
echo "ncu exit $?"
ncu -i $L/ncu_new.ncu-rep --page details > $L/ncu_new.details.txt 2>&1
ncu -i $L/ncu_new.ncu-rep --page source --print-source sass --csv > $L/src.csv 2>&1
gzip -c $L/src.csv > $OUT/new_bf16.source.csv.gz
grep -E "Duration|Executed Ipc A|Issue Slots Busy|Registers Per|DRAM Throughput|Executed Instructions " $L/ncu_new.details.txt | head -8
echo "ncu: $((SECONDS - start)) s"
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c > $L/cases_summary.txt
echo "cases: $((SECONDS - start)) s"
for t in "batch decode: RoPE at every head dim and KV dtype" "batch decode: persistent grid\, short units and merges" "batch decode: a CUDA graph replays correctly on a forced persistent grid"; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "$t" > $L/memcheck_$(echo "$t" | md5sum | cut -c1-8).log 2>&1; echo "memcheck exit $? $t"
done
for f in $L/memcheck_*.log; do tail -n 2 "$f"; done
for f in $L/case_*.log; do grep -q "FAILED" $f && head -c 6000 $f > $OUT/failed_$(basename $f); done
rm -f $L/*.ncu-rep
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
