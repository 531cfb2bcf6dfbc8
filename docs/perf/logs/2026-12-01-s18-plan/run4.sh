# Session 18, call 4 (the final tree: 98d503c's code, min_ctas reverted): the decode GPU cases,
# memcheck on the fp8 case; then a diagnostic of why plans of few lone CTAs read slower
# back to back: fp8 B=16 L=1k (base) and B=256 L=4k (tp8), the default plan against the lone
# plan (FLASHJIT_DECODE_CHUNK), each with programmatic dependent launch on (default) and off
# (FLASHJIT_DECODE_PDL=0), two rounds interleaved. (The demo is left out: its kernels are not in
# this pack.) Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s18d; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 240 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h -E "^All tests passed|^test cases" $L/case_*.log | awk '{gsub(/[()]/,""); for(i=1;i<=NF;i++) if ($i ~ /^[0-9]+$/) {print $i; break}}' | paste -sd+ | bc | sed 's/^/assertions: /'
echo "cases: $((SECONDS - start)) s"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: fp8 KV*" > $L/memcheck.log 2>&1; echo "memcheck exit $?" >> $L/memcheck.log
tail -3 $L/memcheck.log
echo "checks: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
SH="--kv e4m3 --configs base,tp8 --lengths 1024,4096 --shapes base:e4m3:16x1024,tp8:e4m3:256x4096"
for round in 1 2; do
  for t in plan lone; do
    for pdl in on off; do
      echo "==== $t pdl $pdl round $round ($(date +%T))" >> $L/pdl.log
      envs=""; [ $t = lone ] && envs="FLASHJIT_DECODE_CHUNK=4096"; [ $pdl = off ] && envs="$envs FLASHJIT_DECODE_PDL=0"
      env $envs timeout 60 $N/flashjit_bench_decode --plan $SH >> $L/pdl.log 2>&1
      echo "exit $?" >> $L/pdl.log
    done
  done
done
grep -E "^====|^decode" $L/pdl.log | sed -E 's/ +/ /g' | cut -c1-160
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
