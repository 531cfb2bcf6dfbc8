# Session 17, call 1: fp8 KV multiplies in f16 (bf16 q scaled per row into f16; two instructions
# a pair of fp8 values instead of four) and the softmax weights by ex2.approx.ftz. The template
# change re-keys every decode kernel. First the decode GPU cases of the new tree (JIT disabled,
# 8 processes at a time) and memcheck on the fp8 case, then old / new A/B, two rounds
# interleaved: the benchmark grid's fp8 and bf16 shapes, and fp8 KV over the configurations.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s17; rm -rf $L; mkdir -p $L
N=$PWD/build-stage; O=$PWD/build-old
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache $N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache timeout 240 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110; grep -h -E "^All tests passed|^test cases|FAILED" $L/case_*.log | sort | uniq -c
echo "cases: $((SECONDS - start)) s"
LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
  $N/flashjit_gpu_tests "batch decode: fp8 KV*" > $L/memcheck.log 2>&1; echo "memcheck exit $?" >> $L/memcheck.log
tail -3 $L/memcheck.log
echo "memcheck: $((SECONDS - start)) s"
tar czf $OUT/sweeps.tgz -C $L .
GRID=e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024,1x4096,16x1024,16x4096,64x1024,64x4096,16x32768,256x1024
for round in 1 2; do
  for t in old new; do
    B=$O; [ $t = new ] && B=$N
    echo "==== grid $t round $round ($(date +%T))" >> $L/grid.log
    LD_LIBRARY_PATH=$B FLASHJIT_CACHE_DIR=$B/gpu-cache timeout 60 $B/flashjit_bench_decode --plan --shapes $GRID >> $L/grid.log 2>&1
    echo "exit $?" >> $L/grid.log
    echo "==== fp8 configs $t round $round ($(date +%T))" >> $L/fp8.log
    LD_LIBRARY_PATH=$B FLASHJIT_CACHE_DIR=$B/gpu-cache timeout 90 $B/flashjit_bench_decode --plan --kv e4m3 --configs base,tp8,qwen7b,d64,gemma2,page1 >> $L/fp8.log 2>&1
    echo "exit $?" >> $L/fp8.log
    tar czf $OUT/sweeps.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 450 ] && break
done
grep -E "^====|^exit" $L/grid.log $L/fp8.log | tail -16
echo "total: $((SECONDS - start)) s"
