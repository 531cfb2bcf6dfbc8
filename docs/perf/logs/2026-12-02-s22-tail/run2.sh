# Session 22, call 2: tail pieces tuned around call 1's best (5 %), now the default for 16-bit KV.
# 1. Every decode GPU case (8 processes, JIT disabled, no compile allowed), the new tail cases
#    among them; memcheck and racecheck on the small tail case.
# 2. A/B in one process per form, two rounds (forward, reverse): bf16 32/8 heads D 128 page 16 at
#    the one-wave shapes the rule cuts (B=8 L=32k, B=16 L=16k/32k, B=32 L=16k/32k) and two
#    controls it leaves alone (B=16 L=4k, B=64 L=4k): off / 10 % / 5 % / 15 % / 10 % pieces of
#    (call 2) default (5 %) / off / 3 % / 7 % / 5 % pieces of 16 / 5 % pieces of 4.
# 3. Per-CTA stamps of B=16 L=16k/32k, off and 10 %.
# 4. PyTorch's cuDNN SDPA on the same shapes.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
unset FLASHJIT_DECODE_TAIL
L=/tmp/s22; rm -rf $L; mkdir -p $L
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
SH="8x32768,16x16384,16x32768,32x16384,32x32768,64x4096,16x4096"
ab() {  # $1: round
  local forms="def 0 3 7 5,16 5,4"
  [ "$1" = 2 ] && forms="5,4 5,16 7 3 0 def"
  for t in $forms; do
    echo "==== tail $t round $1 ($(date +%T))" >> $L/ab.log
    if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
    timeout 100 $N/flashjit_bench_decode --batches 8,16,32,64 \
      --lengths 4096,16384,32768 --shapes $SH --plan >> $L/ab.log 2>&1; echo "exit $?" >> $L/ab.log
  done
  unset FLASHJIT_DECODE_TAIL
}
ab 1
echo "round 1: $((SECONDS - start)) s"
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c | head -20 > $L/cases_summary.txt
echo "cases: $((SECONDS - start)) s"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: tail pieces small" > $L/memcheck.log 2>&1; echo "memcheck exit $?" | tee -a $L/memcheck.log
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: tail pieces small" > $L/racecheck.log 2>&1; echo "racecheck exit $?" | tee -a $L/racecheck.log
tail -2 $L/memcheck.log $L/racecheck.log
echo "checks: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
ab 2
echo "round 2: $((SECONDS - start)) s"
for t in def 0; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  timeout 60 $N/flashjit_bench_decode --batches 16 --lengths 16384,32768 \
    --shapes 16x16384,16x32768 --stamps $L/stamps-$t.txt > $L/stamps-$t.log 2>&1; echo "stamps $t exit $?"
  grep "^stamps" $L/stamps-$t.log
done
unset FLASHJIT_DECODE_TAIL
gzip $L/stamps-*.txt
tar czf $OUT/logs.tgz -C $L .
timeout 120 python3 tools/bench/torch_decode.py --shapes $SH --backends cudnn > $L/torch_decode.log 2>&1; echo "torch exit $? at $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
