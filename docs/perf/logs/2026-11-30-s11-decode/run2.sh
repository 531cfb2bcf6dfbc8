#!/bin/bash
# Decode device call 2 (session 11): the four forms' small case (plain, memcheck, racecheck);
# per-CTA stamps of five shapes in the four forms P = plain (session 10's kernels), K = L2
# evict-last plan reads (fixed: no per-row branch around the page-id loads), F = item and head
# tile from the launch's divisors, KF = both (the tree's default); bench_decode P K F KF, KF F K
# P, P K F KF with cuDNN (torch_decode.py) after round 1; then the decode GPU cases (default KF;
# no compile allowed, one process per case).
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s11d2; mkdir -p $L
cp $S/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
pack() { (cd $L && tar czf ${OUT:-/tmp}/s11d2.tgz .); }
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
f() { sec "$1 $2"; b --shapes $sh --l2-keep $3 --fast-index $4; }
P() { f P $1 0 0; }; K() { f K $1 1 0; }; F() { f F $1 0 1; }; KF() { f KF $1 1 1; }
{ sec "stamps P"; b --shapes $st --l2-keep 0 --fast-index 0 --stamps $L/stamps-P.txt
  sec "stamps K"; b --shapes $st --l2-keep 1 --fast-index 0 --stamps $L/stamps-K.txt
  sec "stamps F"; b --shapes $st --l2-keep 0 --fast-index 1 --stamps $L/stamps-F.txt
  sec "stamps KF"; b --shapes $st --l2-keep 1 --fast-index 1 --stamps $L/stamps-KF.txt
  P 1; K 1; F 1; KF 1
  sec "torch decode (cudnn)"; timeout 60 python3 tools/bench/torch_decode.py --backends cudnn --shapes 16x4096,64x1024,16x1024,256x1024,1x1024,1x4096,1x16384,16x16384,16x32768,64x4096; echo "exit $?"
  KF 2; F 2; K 2; P 2
  P 3; K 3; F 3; KF 3
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
