# Session 18, call 3 (tree with the variant field min_ctas): fp8 decode at D 128 with more CTAs
# an SM or more stages. The decode GPU cases of the default tree first (the render change re-keys
# every decode kernel), then three forms, two rounds interleaved, same binaries:
#   a = the default (3 CTAs an SM, 4 stages, 168 registers),
#   b = FLASHJIT_DECODE_FP8_CTAS=4 (4 CTAs an SM, 3 stages, 128 registers, 100 bytes spilled),
#   c = FLASHJIT_DECODE_STAGES=6 (2 CTAs an SM, 6 stages).
# Bytes in flight an SM: a 3 x 3 x 16 KB, b 4 x 2 x 16 KB, c 2 x 5 x 16 KB. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s18c; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 240 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt; grep -h -E "^All tests passed|^test cases|FAILED" $L/case_*.log | sort | uniq -c | sort -rn | head -3
echo "cases: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
CF="--kv e4m3 --configs base,tp8,qwen7b,mha --lengths 512,1024,2048,4096,16384"
for round in 1 2; do
  for t in a b c; do
    echo "==== fp8 $t round $round ($(date +%T))" >> $L/forms.log
    case $t in
      a) timeout 100 $N/flashjit_bench_decode --plan $CF >> $L/forms.log 2>&1 ;;
      b) FLASHJIT_DECODE_FP8_CTAS=4 timeout 100 $N/flashjit_bench_decode --plan $CF >> $L/forms.log 2>&1 ;;
      c) FLASHJIT_DECODE_STAGES=6 timeout 100 $N/flashjit_bench_decode --plan $CF >> $L/forms.log 2>&1 ;;
    esac
    echo "exit $?" >> $L/forms.log
    tar czf $OUT/logs.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 400 ] && break
done
grep -E "^====|^exit" $L/forms.log | tail -12
echo "total: $((SECONDS - start)) s"
