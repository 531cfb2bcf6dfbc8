#!/bin/bash
# Decode device call 1 (session 11): the evict-last form's small case (plain, memcheck,
# racecheck); per-CTA stamps (record read / past griddepcontrol.wait / copies issued) of five
# shapes in four forms; bench_decode A = L2 evict-last reads (the new default), B = without,
# C = without + FLASHJIT_DECODE_CLUSTER=0 (last-CTA merge), D = evict-last + cluster 0,
# interleaved A B C D D C B A; cuDNN (torch_decode.py) on the same shapes after round 1; then the
# decode GPU cases (default = evict-last form; no compile allowed, one process per case).
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s11d1; mkdir -p $L
cp $S/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
pack() { (cd $L && tar czf ${OUT:-/tmp}/s11d1.tgz .); }
small="batch decode: L2 evict-last plan reads on and off small"
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "plain: $small"; timeout 40 $S/flashjit_gpu_tests "$small" 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
  for tool in memcheck racecheck; do
    sec "$tool: $small"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$small" 2>&1 | tail -4
    echo "$tool exit: ${PIPESTATUS[0]}"
  done; sec done; } > $L/small.log 2>&1
grep -E "====|passed|failed|exit|SUMMARY" $L/small.log
b() { timeout 40 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
st=16x4096,64x1024,16x1024,256x1024,16x16384
sh=16x4096,64x1024,16x1024,256x1024,1x1024,1x4096,1x16384,16x16384,16x32768,64x4096,e4m3:16x4096,e4m3:256x1024
A() { sec "A evict-last $1"; b --shapes $sh --l2-keep 1; }
B() { sec "B plain $1"; b --shapes $sh --l2-keep 0; }
C() { sec "C plain cluster0 $1"; FLASHJIT_DECODE_CLUSTER=0 b --shapes $sh --l2-keep 0; }
D() { sec "D evict-last cluster0 $1"; FLASHJIT_DECODE_CLUSTER=0 b --shapes $sh --l2-keep 1; }
{ sec "stamps A"; b --shapes $st --l2-keep 1 --stamps $L/stamps-A.txt
  sec "stamps B"; b --shapes $st --l2-keep 0 --stamps $L/stamps-B.txt
  sec "stamps C"; FLASHJIT_DECODE_CLUSTER=0 b --shapes $st --l2-keep 0 --stamps $L/stamps-C.txt
  sec "stamps D"; FLASHJIT_DECODE_CLUSTER=0 b --shapes $st --l2-keep 1 --stamps $L/stamps-D.txt
  A 1; B 1; C 1; D 1
  sec "torch decode (cudnn)"; timeout 60 python3 tools/bench/torch_decode.py --backends cudnn --shapes 16x4096,64x1024,16x1024,256x1024,1x1024,1x4096,1x16384,16x16384,16x32768,64x4096; echo "exit $?"
  D 2; C 2; B 2; A 2
  sec done; } > $L/bench.log 2>&1
gzip $L/stamps-*.txt; pack
grep -E "^stamps .*alone|exit [1-9]" $L/bench.log | cut -c1-230
{ sec "decode GPU tests (no compile allowed, one process per case, 6 at a time)"
  $S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -E "^(batch|single) decode" > $L/names.txt
  wc -l < $L/names.txt; mkdir -p $L/cases
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    timeout 100 $S/flashjit_gpu_tests --durations yes "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  seq 1 $(wc -l < $L/names.txt) | xargs -P 6 -I{} bash -c 'run_case {}'
  for f in $(ls $L/cases/*.log | sort -V); do echo "-- $(basename $f): $(sed -n "$(basename $f .log)p" $L/names.txt)"; grep -E "passed|failed|FAILED|exit" $f | tail -3; done
  sec done; } > $L/tests.log 2>&1
pack
echo "tests exit 0: $(grep -c '^exit 0' $L/tests.log) of $(wc -l < $L/names.txt)"; grep -E "FAILED|exit [1-9]" $L/tests.log | head
