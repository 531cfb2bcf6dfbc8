#!/bin/bash
# Device call for decode (session 9): A = default (clusters of up to 8, no PDL), B = clusters of
# up to 16 (FLASHJIT_DECODE_MAX_CLUSTER=16, non-portable), C = programmatic dependent launch
# (FLASHJIT_DECODE_PDL=1), D = B + C; interleaved three times over every shape; knob-only rows
# of other splits (FLASHJIT_DECODE_CHUNK) on the one-wave shapes; torch_decode.py (cuDNN) after
# round 1. First the decode GPU cases (no compile allowed, one process per case) and racecheck /
# memcheck of the small cluster-of-16 and PDL cases.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s9; mkdir -p $L
cp docs/perf/logs/2026-11-30-s9-decode/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
{ sec "decode GPU tests (no compile allowed, one process per case, 8 at a time)"
  $S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -E "^(batch|single) decode" > $L/names.txt
  wc -l < $L/names.txt
  mkdir -p $L/cases
  i=0; while read -r n; do i=$((i+1)); echo "$i	$n"; done < $L/names.txt > $L/cases/index.txt
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 150 $S/flashjit_gpu_tests --durations yes "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  seq 1 $(wc -l < $L/names.txt) | xargs -P 8 -I{} bash -c 'run_case {}'
  for f in $(ls $L/cases/*.log | sort -V); do echo "-- $(basename $f): $(sed -n "$(basename $f .log)p" $L/names.txt)"; grep -E "passed|failed|FAILED|exit|s: " $f | tail -4; done
  sec done
} > $L/tests.log 2>&1
{ for t in "batch decode: one cluster of 16 CTAs small" "batch decode: programmatic dependent launch small"; do
    for tool in racecheck memcheck; do
      sec "$tool: $t"
      FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$t" 2>&1 | tail -5
      echo "$tool exit: ${PIPESTATUS[0]}"
    done
  done; sec done; } > $L/sanitizer.log 2>&1
b() { timeout 45 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for r in 1 2 3; do
    sec "bench A default (run $r)"; b
    sec "bench B max cluster 16 (run $r)"; FLASHJIT_DECODE_MAX_CLUSTER=16 b
    sec "bench C PDL (run $r)"; FLASHJIT_DECODE_PDL=1 b
    sec "bench D max cluster 16 + PDL (run $r)"; FLASHJIT_DECODE_MAX_CLUSTER=16 FLASHJIT_DECODE_PDL=1 b
    if [ $r -le 2 ]; then
      for ch in 256 1024; do sec "bench chunk $ch (run $r)"; FLASHJIT_DECODE_CHUNK=$ch b --shapes 16x1024,16x4096,64x1024; done
      sec "bench chunk 512 (run $r)"; FLASHJIT_DECODE_CHUNK=512 b --shapes 64x1024
    fi
    [ $r = 1 ] && { sec "torch decode"; timeout 60 python3 tools/bench/torch_decode.py; echo "exit $?"; }
  done
  sec done
} > $L/bench.log 2>&1
cd $L && tar czf cases.tgz cases names.txt && rm -rf cases
grep -cE "^exit 0" $L/tests.log; grep -E "FAILED|exit [1-9]" $L/tests.log | head -20
grep -E "exit [1-9]|====" $L/bench.log | head -40
grep -E "exit|SUMMARY|====" $L/sanitizer.log
