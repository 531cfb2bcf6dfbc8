# Session 18, call 1: the fp8 plan model (d9da9d3: the last wave priced by its CTAs an SM, a lone
# CTA's tile at 0.75, the last CTA's merge at 6 tiles). The decode GPU cases of the new tree (JIT
# disabled, 8 processes at a time), then old (FLASHJIT_DECODE_PLAN_MODEL=s13) against new (the
# default) on every fp8 shape of 8 configurations x 512..32k keys whose plan the model changes
# (shapes.txt; graph_shapes.txt in graph mode), the same binaries and kernels, rounds interleaved.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
D=docs/perf/logs/2026-12-01-s18-plan
L=/tmp/s18; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
$N/flashjit_gpu_tests --list-test-names-only "[decode]" | grep -v "^$" | grep -v "test cases" | sed 's/,/\\,/g' > $L/cases.txt
export N L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'timeout 240 $N/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
sort $L/cases_exit.txt | cut -c1-110 | grep -v "^exit 0" ; grep -c "^exit 0" $L/cases_exit.txt; grep -h -E "^All tests passed|^test cases|FAILED" $L/case_*.log | sort | uniq -c
echo "cases: $((SECONDS - start)) s"
tar czf $OUT/logs.tgz -C $L .
S=$(paste -sd, $D/shapes.txt); G=$(paste -sd, $D/graph_shapes.txt)
CF="--kv e4m3 --configs base,tp8,tp4,qwen7b,mha,d64,page1,page64 --lengths 512,1024,2048,4096,16384,32768"
for round in 1 2; do
  for t in old new; do
    m=s18; [ $t = old ] && m=s13
    echo "==== fp8 $t round $round ($(date +%T))" >> $L/ab.log
    FLASHJIT_DECODE_PLAN_MODEL=$m timeout 150 $N/flashjit_bench_decode --plan $CF --shapes $S >> $L/ab.log 2>&1
    echo "exit $?" >> $L/ab.log
    tar czf $OUT/logs.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 330 ] && break
done
echo "ab: $((SECONDS - start)) s"
for round in 1 2; do
  for t in old new; do
    m=s18; [ $t = old ] && m=s13
    echo "==== graph $t round $round ($(date +%T))" >> $L/graph.log
    FLASHJIT_DECODE_PLAN_MODEL=$m timeout 150 $N/flashjit_bench_decode --graph --plan $CF --shapes $G >> $L/graph.log 2>&1
    echo "exit $?" >> $L/graph.log
    tar czf $OUT/logs.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 470 ] && break
done
grep -E "^====|^exit" $L/ab.log $L/graph.log | tail -16
echo "total: $((SECONDS - start)) s"
