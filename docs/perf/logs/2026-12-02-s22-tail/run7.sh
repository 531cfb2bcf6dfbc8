# Session 22, call 7: the final tree (tail pieces' knob out of the cache key's files; plans of up
# to tail_max_waves waves may be cut, default 1). Every decode GPU case (8 processes, JIT
# disabled, no compile allowed; a two-wave tail case among them), memcheck on the small tail
# case, and an A/B: the default / tails off / tails on plans of up to two waves (3,0,2) at
# B=64 L=4k-32k (512 CTAs, 1.94 waves), with one-wave and many-wave controls, two rounds.
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
SH="64x4096,64x16384,64x32768,48x4096,40x32768,128x4096,16x32768,32x32768"
r=0
for t in def 3,0,2 0 0 3,0,2 def; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== tail $t round $((++r)) ($(date +%T))" >> $L/ab.log
  timeout 100 $N/flashjit_bench_decode --batches 16,32,40,48,64,128 --lengths 4096,16384,32768 \
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
