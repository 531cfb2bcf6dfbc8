# Session 19, call 1: the persistent grid for fp8 KV (kernel with unit records and the next query
# read through the L1, 168 registers; fp8 epilogue in pairs of warps).
# 1. Every decode GPU case (8 processes, JIT disabled), memcheck and racecheck on the small
#    persistent case (fp8 included).
# 2. fp8 (e4m3) over base / tp8 / qwen7b, B 1-256, L 512-16k: --persistent 0 (one CTA per unit)
#    against 1 (every plan that does not cluster on the persistent grid), two rounds interleaved.
# 3. 16-bit: the session-18 tree (build-s18, old) against this tree (new), default plans, the
#    benchmark grid and the configurations' bf16 persistent shapes, two rounds interleaved.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s19.tar.gz
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s19; rm -rf $L; mkdir -p $L
N=$PWD/build-s19; O=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 240 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
grep -h -E "^All tests passed|^test cases" $L/case_*.log | awk '{gsub(/[()]/,""); for(i=1;i<=NF;i++) if ($i ~ /^[0-9]+$/) {print $i; break}}' | paste -sd+ | bc | sed 's/^/assertions: /'
echo "cases: $((SECONDS - start)) s"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $N/flashjit_gpu_tests "batch decode: persistent grid\, short units and merges" > $L/$tool.log 2>&1; echo "$tool exit $?" >> $L/$tool.log
  tail -2 $L/$tool.log
done
echo "checks: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
F8="--kv e4m3 --configs base,tp8,qwen7b --lengths 512,1024,2048,4096,16384"
for round in 1 2; do
  for p in 0 1; do
    echo "==== fp8 persistent $p round $round ($(date +%T))" >> $L/fp8.log
    timeout 150 $N/flashjit_bench_decode --plan --persistent $p $F8 >> $L/fp8.log 2>&1
    echo "exit $?" >> $L/fp8.log
  done
done
echo "fp8: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
B16="--configs base,tp8,qwen7b --lengths 512,1024,2048 --shapes base:64x1024,base:64x512,base:64x2048,tp8:256x1024,tp8:256x512,qwen7b:64x1024,qwen7b:64x2048,qwen7b:256x512"
for round in 1 2; do
  for t in old new; do
    D=$N; [ $t = old ] && D=$O
    echo "==== bf16 $t grid round $round ($(date +%T))" >> $L/bf16.log
    LD_LIBRARY_PATH=$D FLASHJIT_CACHE_DIR=$D/gpu-cache timeout 120 $D/flashjit_bench_decode --plan >> $L/bf16.log 2>&1
    echo "exit $?" >> $L/bf16.log
    echo "==== bf16 $t configs round $round ($(date +%T))" >> $L/bf16.log
    LD_LIBRARY_PATH=$D FLASHJIT_CACHE_DIR=$D/gpu-cache timeout 60 $D/flashjit_bench_decode --plan $B16 >> $L/bf16.log 2>&1
    echo "exit $?" >> $L/bf16.log
  done
done
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
