# Session 24, call 1: fp8 at D 256 (gemma2: 16/8 heads, soft cap) planned for two CTAs an SM
# (ops::DecodeCtasPerSm now counts them from the kernel's 255 registers and 74 KB of shared
# memory: 264 slots) against the one counted before (FLASHJIT_DECODE_CTAS_PER_SM=1: 132 slots,
# session 23's plans), and with the new count but no tail pieces (FLASHJIT_DECODE_TAIL=0), three
# rounds, interleaved. gemma2 bf16 (one CTA an SM either way, the same plans) as the noise
# control. Then every decode GPU case (8 processes, JIT disabled, no compile allowed) and
# memcheck on the dtypes / head dims case. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1
unset FLASHJIT_DECODE_TAIL FLASHJIT_DECODE_CTAS_PER_SM
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--configs gemma2 --batches 1,4,8,16,32,64,128,256 --lengths 1024,2048,4096,8192,16384,32768"
r=0
for form in old new notail notail new old old new notail; do
  unset FLASHJIT_DECODE_TAIL FLASHJIT_DECODE_CTAS_PER_SM
  [ $form = old ] && export FLASHJIT_DECODE_CTAS_PER_SM=1
  [ $form = notail ] && export FLASHJIT_DECODE_TAIL=0
  echo "==== form $form round $((++r)) ($(date +%T))" >> $OUT/ab.log
  timeout 120 $N/flashjit_bench_decode --kv e4m3 $G --plan >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
  if [ $r -le 4 ] && [ $form != notail ]; then
    echo "==== bf16 form $form round $r" >> $OUT/ab_bf16.log
    timeout 120 $N/flashjit_bench_decode $G >> $OUT/ab_bf16.log 2>&1
  fi
done
unset FLASHJIT_DECODE_TAIL FLASHJIT_DECODE_CTAS_PER_SM
echo "ab: $((SECONDS - start)) s"
export FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s24; rm -rf $L; mkdir -p $L
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c > $L/cases_summary.txt
cat $L/cases_summary.txt | head -40
echo "cases: $((SECONDS - start)) s"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: dtypes\, head dims\, knobs" > $L/memcheck.log 2>&1; echo "memcheck exit $?"
tail -3 $L/memcheck.log
tar czf $OUT/logs.tgz -C $L .
grep -c "^decode" $OUT/ab.log
echo "total: $((SECONDS - start)) s"
