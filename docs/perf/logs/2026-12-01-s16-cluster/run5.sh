# Session 16's fifth call (final tree 97596b1, build-s5; host code only): graph-mode wrappers
# sized for one wave of split items beyond the batch where it fits one wave unsplit, else four,
# against the tree before (build-s3: 60975f9 = 35c1f8d in graph mode), both on build-s3's kernel cache. First the graph and decode
# GPU cases on the new tree (8 processes at a time) and memcheck on the graph cases, then graph
# mode old / new over the configurations and short contexts, two rounds interleaved.
echo "$1" > "$OUT/commit.txt"
export FLASHJIT_CACHE_DIR=$PWD/build-s3/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s16e; rm -rf $L; mkdir -p $L
N=$PWD/build-s5; O=$PWD/build-s3
printf '%s\n' "batch decode: a CUDA graph captured once replays correctly after new plans" \
  "batch decode: a CUDA graph in thread-block clusters replays correctly after new plans" \
  "batch decode: a CUDA graph replays correctly on a forced persistent grid" \
  "batch decode: dtypes\, head dims\, knobs" "batch decode: mixed lengths\, page sizes\, GQA ratios\, layouts" \
  "batch decode: production configurations" "batch decode: split requests merged over many partials" > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'LD_LIBRARY_PATH=$N timeout 200 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
cat $L/cases_exit.txt; grep -h -E "^All tests passed|^test cases|^No test cases|FAILED" $L/case_*.log | sort | uniq -c
LD_LIBRARY_PATH=$N timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  $N/flashjit_gpu_tests "*a CUDA graph*" > $L/memcheck.log 2>&1; echo "memcheck exit $?" >> $L/memcheck.log
tail -3 $L/memcheck.log
echo "cases: $((SECONDS - start)) s"
CFGS=base,tp8,tp4,qwen7b,mha,page1,page64,f16
for round in 1 2; do
  for t in old new; do
    B=$O; [ $t = new ] && B=$N
    echo "==== graph $t round $round ($(date +%T))" >> $L/graph_ab.log
    LD_LIBRARY_PATH=$B timeout 60 $B/flashjit_bench_decode --graph --plan --configs $CFGS >> $L/graph_ab.log 2>&1
    echo "exit $?" >> $L/graph_ab.log
    echo "==== graph $t round $round ($(date +%T))" >> $L/graph_short.log
    LD_LIBRARY_PATH=$B timeout 60 $B/flashjit_bench_decode --graph --plan --configs base,tp8,qwen7b,mha --lengths 256,512,2048 >> $L/graph_short.log 2>&1
    echo "exit $?" >> $L/graph_short.log
    echo "==== graph $t round $round ($(date +%T))" >> $L/graph_grid.log
    LD_LIBRARY_PATH=$B timeout 60 $B/flashjit_bench_decode --graph --plan >> $L/graph_grid.log 2>&1
    echo "exit $?" >> $L/graph_grid.log
    tar czf $OUT/sweeps.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 330 ] && break
done
grep -E "^====|^exit" $L/*.log | tail -14
echo "total: $((SECONDS - start)) s"
