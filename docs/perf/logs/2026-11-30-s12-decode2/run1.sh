#!/bin/bash
# Decode device call 1 of session 12 round 2 (tree with the claim forms steal_lag2 / steal_fine):
# the small stealing case under lag 2 and under fine claims (plain, memcheck, racecheck), the full
# stealing case under fine claims; bench_decode D / S1 / S2
# / F (forms.sh) over the 7 shapes whose plans pair chunks, four rounds in rotating order, cuDNN after
# round 1 (B=1 and B=16 at L=16k/32k); stamps; then the decode GPU cases under lag 2 (no compile
# allowed, one process per case).
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s12e1; mkdir -p $L; cp $S/commit.txt $L/
source docs/perf/logs/2026-11-30-s12-decode2/forms.sh
sec() { echo "==== $* ($(date +%T))"; }
pack() { (cd $L && tar czf ${OUT:-/tmp}/s12e1.tgz .); }
small="batch decode: pair stealing small"
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for envf in FLASHJIT_DECODE_STEAL_LAG=2 FLASHJIT_DECODE_STEAL_FINE=1; do
    sec "plain ($envf): $small"; env $envf timeout 40 $S/flashjit_gpu_tests "$small" 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
    for tool in memcheck racecheck; do
      sec "$tool ($envf): $small"
      env $envf timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$small" 2>&1 | tail -4
      echo "$tool exit: ${PIPESTATUS[0]}"
    done
  done
  sec "batch decode: pair stealing (FLASHJIT_DECODE_STEAL_FINE=1)"
  FLASHJIT_DECODE_STEAL_FINE=1 timeout 100 $S/flashjit_gpu_tests "batch decode: pair stealing" 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
  sec done; } > $L/small.log 2>&1
grep -E "====|passed|failed|exit|SUMMARY" $L/small.log
form() { set -- $1; local name=$1 lag=$2 shapes=$3; shift 3
  sec "$name round $R"
  FLASHJIT_DECODE_STEAL_LAG=${lag%f} FLASHJIT_DECODE_STEAL_FINE=$([ "$lag" = 1f ] && echo 1 || echo 0) timeout 60 $S/flashjit_bench_decode --shapes $shapes "$@"; echo "exit $?"; }
{ R=1; form "${FORMS[0]}"; form "${FORMS[1]}"; form "${FORMS[2]}"; form "${FORMS[3]}"
  sec "torch decode (cudnn)"; timeout 90 python3 tools/bench/torch_decode.py --backends cudnn --shapes 1x16384,1x32768,16x16384,16x32768; echo "exit $?"
  R=2; form "${FORMS[3]}"; form "${FORMS[2]}"; form "${FORMS[1]}"; form "${FORMS[0]}"
  R=3; form "${FORMS[1]}"; form "${FORMS[3]}"; form "${FORMS[0]}"; form "${FORMS[2]}"
  R=4; form "${FORMS[2]}"; form "${FORMS[0]}"; form "${FORMS[3]}"; form "${FORMS[1]}"
  for f in "${STAMPS[@]}"; do set -- $f; n=$1 lag=$2 sh=$3; shift 3
    sec "stamps $n"; FLASHJIT_DECODE_STEAL_LAG=${lag%f} FLASHJIT_DECODE_STEAL_FINE=$([ "$lag" = 1f ] && echo 1 || echo 0) timeout 60 $S/flashjit_bench_decode --shapes $sh --stamps $L/stamps-$n.txt "$@"; echo "exit $?"
  done
  sec done; } > $L/bench.log 2>&1
gzip $L/stamps-*.txt; pack
awk '/^==== /{f=$2" r"$4} /^decode /{printf "%s %s B=%s L=%s %s %s %s\n", f, $2, substr($3,3), substr($4,3), $5, $(NF-9), $(NF-3)}' $L/bench.log
grep -E "^stamps .*(alone|b2b)" $L/bench.log | sed -E 's/ ideal.*//; s/ nhd//; s/ramp.*item/item/' | cut -c1-170
grep -E "exit [1-9]|rror" $L/bench.log | head
{ sec "decode GPU tests under FLASHJIT_DECODE_STEAL_LAG=2 (no compile allowed, one process per case, 6 at a time)"
  export FLASHJIT_DECODE_STEAL_LAG=2
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
