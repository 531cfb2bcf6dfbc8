#!/bin/bash
# Device call for decode (session 8): K/V rows by the bulk-copy engine (FLASHJIT_DECODE_BULK).
# bench, interleaved twice: 0 (cp.async, the default) / 1 (bulk, 3 stages, 2 CTAs/SM) /
# 1 + 6 stages (1 CTA/SM) / 1 + 2 stages (3 CTAs/SM); torch_decode.py (cuDNN) after round 1;
# the decode GPU cases (no compile allowed, one process per case); racecheck and memcheck of the
# small bulk case; ncu WarpStateStats of B=16 L=4k and B=64 L=1k, cp.async vs bulk.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s8; mkdir -p $L
cp docs/perf/logs/2026-11-30-s8-decode/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
b() { timeout 40 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for r in 1 2; do
    sec "bench bulk 0 (run $r)"; b --bulk 0
    sec "bench bulk 1 (run $r)"; b --bulk 1
    sec "bench bulk 1 stages 6 (run $r)"; FLASHJIT_DECODE_STAGES=6 b --bulk 1 --shapes 1x1024,1x4096,1x16384,1x32768,16x1024,16x4096,16x16384,16x32768,64x1024,64x4096,64x16384,64x32768,256x1024,256x4096,256x16384
    sec "bench bulk 1 stages 2 (run $r)"; FLASHJIT_DECODE_STAGES=2 b --bulk 1 --shapes 1x1024,1x4096,1x16384,1x32768,16x1024,16x4096,16x16384,16x32768,64x1024,64x4096,64x16384,64x32768,256x1024,256x4096,256x16384
    [ $r = 1 ] && { sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"; }
  done
} > $L/bench.log 2>&1
{ sec "decode GPU tests (no compile allowed, one process per case, 8 at a time)"
  $S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -E "^(batch|single) decode" > $L/names.txt
  wc -l < $L/names.txt
  mkdir -p $L/cases
  i=0; while read -r n; do i=$((i+1)); echo "$i	$n"; done < $L/names.txt > $L/cases/index.txt
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 200 $S/flashjit_gpu_tests --durations yes "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  seq 1 $(wc -l < $L/names.txt) | xargs -P 8 -I{} bash -c 'run_case {}'
  for f in $(ls $L/cases/*.log | sort -V); do echo "-- $(basename $f): $(sed -n "$(basename $f .log)p" $L/names.txt)"; grep -E "passed|failed|FAILED|exit|s: " $f | tail -4; done
  sec done
} > $L/tests.log 2>&1
{ sec racecheck
  timeout 90 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: bulk-copy variant\, small cases" 2>&1 | tail -6
  echo "racecheck exit: ${PIPESTATUS[0]}"
  sec memcheck
  timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "batch decode: bulk-copy variant\, small cases" 2>&1 | tail -6
  echo "memcheck exit: ${PIPESTATUS[0]}"; sec done; } > $L/sanitizer.log 2>&1
{ for sh in 16x4096 64x1024; do for m in 0 1; do
    sec "ncu $sh bulk $m"
    timeout 40 ncu --section WarpStateStats --section SpeedOfLight --section LaunchStats -k regex:flashjit_decode -c 1 $S/flashjit_bench_decode --once --bulk $m --shapes $sh 2>&1 | grep -vE "^==PROF==|^ *$" | tail -60
  done; done; sec done; } > $L/ncu.log 2>&1
cd $L && tar czf cases.tgz cases names.txt && rm -rf cases
grep -cE "^exit 0" $L/tests.log; grep -E "FAILED|exit [1-9]" $L/tests.log | head -20
grep -E "exit|====" $L/bench.log | head -50
grep -E "exit|SUMMARY|====" $L/sanitizer.log
