# Session 20, call 3 (after the fp8 D 256 regression of call 2): the loader reads the page size
# and row steps from the kernel parameters (DecodeParams::page_row_pages / page_row_tokens) and,
# at fp8 D 256, divides for each row.
# 1. Every decode GPU case (8 processes, JIT disabled); memcheck on the page-size case and a
#    small fp8 case, racecheck on a small case.
# 2. A/B, old (HEAD 9141dda, build-old) against new (this tree, build-new), two rounds
#    interleaved: the bf16 benchmark grid, fp8 e4m3 over six configurations, bf16 over d64 and
#    gemma2 (the kernels whose registers moved).
# 3. PyTorch's cuDNN SDPA on the benchmark grid, for the table.
# Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s20.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s20; rm -rf $L; mkdir -p $L
N=$PWD/build-new; O=$PWD/build-old
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 300 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
echo "cases: $((SECONDS - start)) s"
san() {  # tool, case
  timeout 150 compute-sanitizer --tool $1 --error-exitcode 9 $N/flashjit_gpu_tests "$2" > $L/$1.log 2>&1; echo "$1 exit $?" >> $L/$1.log
  echo "$1 $2: $(tail -2 $L/$1.log | tr '\n' ' ')"
}
san memcheck "batch decode: page sizes that do not divide a tile"
san memcheck "batch decode: production configurations small"
san racecheck "batch decode: CTA index forms small"
echo "checks: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
F8="--kv e4m3 --configs base,tp8,qwen7b,d64,gemma2,page1 --lengths 512,1024,4096,16384"
B16="--configs d64,gemma2 --lengths 1024,4096,16384"
for round in 1 2; do
  for t in old new; do
    D=$N; [ $t = old ] && D=$O
    export LD_LIBRARY_PATH=$D FLASHJIT_CACHE_DIR=$D/gpu-cache
    echo "==== grid $t round $round ($(date +%T))" >> $L/grid.log
    timeout 100 $D/flashjit_bench_decode --plan >> $L/grid.log 2>&1; echo "exit $?" >> $L/grid.log
    echo "==== fp8 $t round $round ($(date +%T))" >> $L/fp8.log
    timeout 150 $D/flashjit_bench_decode --plan $F8 >> $L/fp8.log 2>&1; echo "exit $?" >> $L/fp8.log
    echo "==== bf16 $t round $round ($(date +%T))" >> $L/bf16.log
    timeout 100 $D/flashjit_bench_decode --plan $B16 >> $L/bf16.log 2>&1; echo "exit $?" >> $L/bf16.log
  done
  echo "round $round: $((SECONDS - start)) s"
  tar czf $OUT/logs.tgz -C $L .
done
timeout 120 python3 tools/bench/torch_decode.py > $L/torch_decode.log 2>&1; echo "torch exit $? at $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
echo "total: $((SECONDS - start)) s"
