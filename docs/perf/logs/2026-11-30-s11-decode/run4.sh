#!/bin/bash
# Decode device call 4 (session 11), the final tree: the CTA index forms' small case (plain,
# memcheck, racecheck); bench_decode over every shape, A = the default (fast_index auto: the
# launch's divisors for plans with more CTAs than slots), P = fast_index 0 everywhere (session
# 10's arithmetic), F = fast_index 1 everywhere, A P F F P A with cuDNN (torch_decode.py) after
# round 1; per-CTA stamps of the default; then the decode GPU cases (default; no compile allowed,
# one process per case).
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s11d4; mkdir -p $L
cp $S/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
pack() { (cd $L && tar czf ${OUT:-/tmp}/s11d4.tgz .); }
small="batch decode: CTA index forms small"
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
all=1x1024,1x4096,1x16384,1x32768,16x1024,16x4096,16x16384,16x32768,64x1024,64x4096,64x16384,64x32768,256x1024,256x4096,256x16384,256x32768,e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024
f() { sec "$1 $2"; b --shapes $all --fast-index $3; }
A() { f A $1 auto; }; P() { f P $1 0; }; F() { f F $1 1; }
{ A 1; P 1; F 1
  sec "torch decode (cudnn)"; timeout 90 python3 tools/bench/torch_decode.py --backends cudnn; echo "exit $?"
  F 2; P 2; A 2
  sec "stamps A"; b --shapes $st --stamps $L/stamps-A.txt
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
