# Session 18, call 6 (the final tree f245a76): the decode GPU cases, then the PDL rule's 10 fp8
# shapes, s18a (PDL by keys only) against the default (no PDL where waiting successors would crowd
# the launch), two rounds interleaved, stream mode. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s18f; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 240 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0"; grep -c "^exit 0" $L/cases_exit.txt
echo "cases: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
SH="--kv e4m3 --configs base,tp8,tp4,qwen7b,page1,page64 --lengths 512,1024,2048 --shapes base:e4m3:16x512,tp8:e4m3:256x512,tp8:e4m3:256x1024,tp8:e4m3:256x2048,tp4:e4m3:64x512,qwen7b:e4m3:64x512,qwen7b:e4m3:64x1024,qwen7b:e4m3:64x2048,page1:e4m3:16x512,page64:e4m3:16x512"
for round in 1 2; do
  for t in old new; do
    m=s18; [ $t = old ] && m=s18a
    echo "==== pdl $t round $round ($(date +%T))" >> $L/pdl.log
    FLASHJIT_DECODE_PLAN_MODEL=$m timeout 60 $N/flashjit_bench_decode --plan $SH >> $L/pdl.log 2>&1
    echo "exit $?" >> $L/pdl.log
  done
done
tar czf $OUT/logs.tgz -C $L .
grep -E "^====|^exit" $L/pdl.log | tail -4
echo "total: $((SECONDS - start)) s"
