#!/bin/bash
# Device call for decode (session 10): the decode GPU cases (no compile allowed, one process per
# case, 8 at a time), racecheck / memcheck of the small case of the new forms, per-CTA stamps of
# five shapes (NHD default, balanced plan, L2 evict-first, HND), then bench_decode over every
# bf16 B x L shape and the fp8 rows: A = default, B = balanced plan (--balance 1), C = L2
# evict-first (--l2-hint 1), interleaved twice (A B C, then C B A), torch_decode.py (cuDNN) after
# round 1, and HND against NHD on the five diagnostic shapes twice.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s10; mkdir -p $L
cp docs/perf/logs/2026-11-30-s10-decode/commit.txt $L/
sec() { echo "==== $* ($(date +%T))"; }
{ sec "decode GPU tests (no compile allowed, one process per case, 8 at a time)"
  $S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -E "^(batch|single) decode" > $L/names.txt
  wc -l < $L/names.txt
  mkdir -p $L/cases
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 150 $S/flashjit_gpu_tests --durations yes "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  seq 1 $(wc -l < $L/names.txt) | xargs -P 8 -I{} bash -c 'run_case {}'
  for f in $(ls $L/cases/*.log | sort -V); do echo "-- $(basename $f): $(sed -n "$(basename $f .log)p" $L/names.txt)"; grep -E "passed|failed|FAILED|exit|s: " $f | tail -4; done
  sec done
} > $L/tests.log 2>&1
{ t="*L2 evict-first and stamps small"
  for tool in racecheck memcheck; do
    sec "$tool: $t"
    FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$t" 2>&1 | tail -5
    echo "$tool exit: ${PIPESTATUS[0]}"
  done; sec done; } > $L/sanitizer.log 2>&1
b() { timeout 60 $S/flashjit_bench_decode "$@"; echo "exit $?"; }
five=16x4096,64x1024,16x16384,256x1024,64x16384
all=1x1024,1x4096,1x16384,1x32768,16x1024,16x4096,16x16384,16x32768,64x1024,64x4096,64x16384,64x32768,256x1024,256x4096,256x16384,256x32768,e4m3:16x4096,e4m3:64x4096,e4m3:64x32768,e4m3:256x1024
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  sec "stamps NHD default"; b --shapes $five --stamps $L/stamps-nhd.txt
  sec "stamps NHD balanced"; b --shapes $five --stamps $L/stamps-balance.txt --balance 1
  sec "stamps NHD L2 evict-first"; b --shapes $five --stamps $L/stamps-l2.txt --l2-hint 1
  sec "stamps HND default"; b --shapes $five --stamps $L/stamps-hnd.txt --layout hnd
  sec "bench A default (run 1)"; b --shapes $all
  sec "bench B balanced (run 1)"; b --shapes $all --balance 1
  sec "bench C L2 evict-first (run 1)"; b --shapes $all --l2-hint 1
  sec "torch decode"; timeout 90 python3 tools/bench/torch_decode.py; echo "exit $?"
  sec "bench C L2 evict-first (run 2)"; b --shapes $all --l2-hint 1
  sec "bench B balanced (run 2)"; b --shapes $all --balance 1
  sec "bench A default (run 2)"; b --shapes $all
  for r in 1 2; do
    sec "bench HND default (run $r)"; b --shapes $five --layout hnd
    sec "bench NHD default (run $r)"; b --shapes $five
  done
  sec done
} > $L/bench.log 2>&1
cd $L && tar czf raw.tgz cases names.txt stamps-*.txt && rm -rf cases stamps-*.txt
grep -cE "^exit 0" $L/tests.log; grep -E "FAILED|exit [1-9]" $L/tests.log | head -20
grep -E "exit [1-9]|====" $L/bench.log | head -40
grep -E "exit|SUMMARY|====" $L/sanitizer.log
