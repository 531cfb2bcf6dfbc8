# Session 22, call 8: the final tree (tails by default on plans of up to two waves whose wave reads
# at least 96 tiles a slot). Every decode GPU case (8 processes, JIT
# disabled, no compile allowed; a two-wave tail case among them), memcheck on the small tail
# case, and an A/B: the default against tails off at the two-wave plans the default now cuts
# (B=56 L=32k, B=60 L=16k, B=64 L=8k-32k, B=66 L=16k) and B=16 L=32k, two rounds.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
unset FLASHJIT_DECODE_TAIL
start=$SECONDS
L=/tmp/s22; rm -rf $L; mkdir -p $L
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
SH="56x32768,60x16384,66x16384,64x8192,64x16384,64x32768,16x32768"
r=0
for t in def 0 0 def; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== tail $t round $((++r)) ($(date +%T))" >> $L/ab.log
  timeout 100 $N/flashjit_bench_decode --batches 16,56,60,64,66 --lengths 8192,16384,32768 \
    --shapes $SH --plan >> $L/ab.log 2>&1; echo "exit $?" >> $L/ab.log
done
unset FLASHJIT_DECODE_TAIL
echo "ab: $((SECONDS - start)) s"
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c > $L/cases_summary.txt
echo "cases: $((SECONDS - start)) s"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: tail pieces small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"
grep "^decode" $L/ab.log | cut -c1-150
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
