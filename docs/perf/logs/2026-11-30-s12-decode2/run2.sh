#!/bin/bash
# Decode device call 2 of session 12 round 2 (the tree with the claim forms reverted: 815b0fc's
# kernels and default): bench_decode D (--steal 0) against A (the default, auto) at B=16 L=16k /
# 32k, six rounds alternating D A / A D, cuDNN after round 1; then the decode GPU cases under the
# default (no compile allowed, one process per case).
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s12e2; mkdir -p $L; cp $S/commit.txt $L/
source docs/perf/logs/2026-11-30-s12-decode2/forms2.sh
sec() { echo "==== $* ($(date +%T))"; }
pack() { (cd $L && tar czf ${OUT:-/tmp}/s12e2.tgz .); }
form() { set -- $1; local name=$1 shapes=$3; shift 3
  sec "$name round $R"; timeout 60 $S/flashjit_bench_decode --shapes $shapes "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  R=1; form "${FORMS[0]}"; form "${FORMS[1]}"
  sec "torch decode (cudnn)"; timeout 90 python3 tools/bench/torch_decode.py --backends cudnn --shapes 16x16384,16x32768; echo "exit $?"
  R=2; form "${FORMS[1]}"; form "${FORMS[0]}"
  R=3; form "${FORMS[0]}"; form "${FORMS[1]}"
  R=4; form "${FORMS[1]}"; form "${FORMS[0]}"
  R=5; form "${FORMS[0]}"; form "${FORMS[1]}"
  R=6; form "${FORMS[1]}"; form "${FORMS[0]}"
  sec done; } > $L/bench.log 2>&1
pack
awk '/^==== /{f=$2" r"$4} /^decode /{printf "%s %s B=%s L=%s %s %s %s\n", f, $2, substr($3,3), substr($4,3), $5, $(NF-9), $(NF-3)}' $L/bench.log
grep -iE "cudnn|exit [1-9]|rror" $L/bench.log | head -12
{ sec "decode GPU tests, default knobs (no compile allowed, one process per case, 6 at a time)"
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
