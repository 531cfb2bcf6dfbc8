#!/bin/bash
# Session 13 deccfg, device call 2: A/B of the two changes, interleaved (forms2.sh): the plan
# model (s12 vs s13) over the configurations whose plans changed, D 256's pipeline depth (2 vs 3
# stages) over Gemma-2's shapes; two rounds in alternating order, cuDNN between them; then the
# [decode] GPU cases (no compile allowed, one process per case) and memcheck / racecheck of the
# small production-configuration case.
S=$PWD/build-deccfg-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/deccfg2; mkdir -p $L; cp $S/commit.txt $L/
source docs/perf/logs/2026-11-30-s13-deccfg/forms2.sh
sec() { echo "==== $* ($(date +%T))"; }
pack() { (cd $L && tar czf ${OUT:-/tmp}/deccfg2.tgz .); }
form() { set -- $1; sec "$1 round $R"; env ${2/#-/X=1} timeout 40 $S/flashjit_bench_decode --configs $3 --shapes $4; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
  R=1; form "${FORMS[0]}"; form "${FORMS[1]}"; form "${FORMS[2]}"; form "${FORMS[3]}"
  sec "torch decode (cudnn)"; timeout 50 python3 tools/bench/torch_decode.py --backends cudnn --configs tp8,tp4,qwen7b,mha,gemma2,gemma2w --shapes $MODEL_SHAPES,$STAGE_SHAPES; echo "exit $?"
  R=2; form "${FORMS[1]}"; form "${FORMS[0]}"; form "${FORMS[3]}"; form "${FORMS[2]}"
  sec done; } > $L/bench.log 2>&1
pack
awk '/^==== /{f=$2" r"$4} /^decode /{printf "%s %s B=%s L=%s %s %s %s\n", f, $2, substr($4,3), substr($5,3), $6, $(NF-9), $(NF-3)}' $L/bench.log
grep -E "exit [1-9]|rror" $L/bench.log | head
{ sec "decode GPU tests (no compile allowed, one process per case, 12 at a time)"
  $S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -E "^(batch|single) decode" > $L/names.txt
  wc -l < $L/names.txt; mkdir -p $L/cases
  run_case() { local n; n=$(sed -n "$1p" "$L/names.txt")
    timeout 120 $S/flashjit_gpu_tests "${n//,/\\,}" > $L/cases/$1.log 2>&1
    echo "exit $?" >> $L/cases/$1.log; }
  export -f run_case; export S L
  seq 1 $(wc -l < $L/names.txt) | xargs -P 12 -I{} bash -c 'run_case {}'
  for f in $(ls $L/cases/*.log | sort -V); do echo "-- $(basename $f): $(sed -n "$(basename $f .log)p" $L/names.txt)"; grep -E "passed|failed|FAILED|exit|^engine" $f | tail -4; done
  small="batch decode: production configurations small"
  for tool in memcheck racecheck; do
    sec "$tool: $small"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 $S/flashjit_gpu_tests "$small" 2>&1 | tail -4
    echo "$tool exit: ${PIPESTATUS[0]}"
  done
  sec done; } > $L/tests.log 2>&1
pack
echo "tests exit 0: $(grep -c '^exit 0' $L/tests.log) of $(wc -l < $L/names.txt)"; grep -E "FAILED|exit [1-9]|check exit|ERROR SUMMARY|hazard" $L/tests.log | head
