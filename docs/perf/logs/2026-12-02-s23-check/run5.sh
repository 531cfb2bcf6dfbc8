# Session 23, call 5: the new default tail rule (whole requests of one-wave plans only from 384
# tiles a slot, 192 for fp8; fp8 caches on; never one CTA an SM). Every decode GPU case (8
# processes, JIT disabled, no compile allowed), memcheck on the small tail case, then the A/B:
# every shape the new default cuts (bf16/f16 and fp8 over 10 configurations), tails off
# (FLASHJIT_DECODE_TAIL=0) against the default, three rounds each. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export FLASHJIT_DISABLE_JIT=1
unset FLASHJIT_DECODE_TAIL
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
D=docs/perf/logs/2026-12-02-s23-check
BS=$(cat $D/bf16_new_cut.txt) FS=$(cat $D/fp8_new_cut.txt)
CF=base,tp8,tp4,qwen7b,gemma2,mha,d64,page1,page64,f16
r=0
for t in 0 def def 0 0 def; do
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== tail $t round $((++r)) ($(date +%T))" >> $OUT/ab.log
  timeout 120 $N/flashjit_bench_decode --configs $CF --batches 4,8,16,24,32,48,64,128,256 \
    --lengths 8192,16384,32768 --shapes "$BS" >> $OUT/ab.log 2>&1
  timeout 120 $N/flashjit_bench_decode --kv e4m3 --configs $CF --batches 4,8,16,24,32,48,64,128,256 \
    --lengths 8192,16384,32768 --shapes "$FS" >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
done
unset FLASHJIT_DECODE_TAIL
echo "ab: $((SECONDS - start)) s"
export FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s23; rm -rf $L; mkdir -p $L
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | grep -v "^GPU tests: seed\|^engine: " | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h "^All tests passed\|^test cases" $L/case_*.log | sort | uniq -c > $L/cases_summary.txt
cat $L/cases_summary.txt | head -40
echo "cases: $((SECONDS - start)) s"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: tail pieces small" > $L/memcheck.log 2>&1; echo "memcheck exit $?"
tail -3 $L/memcheck.log
tar czf $OUT/logs.tgz -C $L .
grep -c "^decode" $OUT/ab.log
echo "total: $((SECONDS - start)) s"
