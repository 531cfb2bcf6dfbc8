#!/bin/bash
# Decode device call 1 (session 12): FLASHJIT_DECODE_CHUNK forms (forms.sh) on the long shapes,
# three rounds (forward, reverse, forward) with cuDNN (torch_decode.py) after round 1, then
# per-CTA stamps (sm-tail) of the default and the 8192 / 4096 chunks. No kernel change: no tests.
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so PYTHONUNBUFFERED=1 FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s12d1; mkdir -p $L; cp $S/commit.txt $L/
source docs/perf/logs/2026-11-30-s12-decode/forms.sh
sec() { echo "==== $* ($(date +%T))"; }
form() { set -- $1; local name=$1 chunk=$2 shapes=$3; shift 3
  sec "$name round $R"
  FLASHJIT_DECODE_CHUNK=$chunk timeout 60 $S/flashjit_bench_decode --shapes $shapes "$@"; echo "exit $?"; }
{ sec device; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  R=1; for f in "${FORMS[@]}"; do form "$f"; done
  sec "torch decode (cudnn)"
  timeout 120 python3 tools/bench/torch_decode.py --backends cudnn --shapes 1x16384,1x32768,16x16384,16x32768,64x16384,64x32768; echo "exit $?"
  R=2; for ((i=${#FORMS[@]}-1; i>=0; i--)); do form "${FORMS[$i]}"; done
  R=3; for f in "${FORMS[@]}"; do form "$f"; done
  for f in "${STAMPS[@]}"; do set -- $f
    sec "stamps $1"; FLASHJIT_DECODE_CHUNK=$2 timeout 60 $S/flashjit_bench_decode --shapes $3 --stamps $L/stamps-$1.txt; echo "exit $?"
  done
  sec done; } > $L/bench.log 2>&1
gzip $L/stamps-*.txt; (cd $L && tar czf ${OUT:-/tmp}/s12d1.tgz .)
# Compact summary: form round shape synced / queued / b2b us.
awk '/^==== /{f=$2" r"$4} /^decode /{printf "%s B=%s L=%s %s %s %s\n", f, substr($3,3), substr($4,3), $5, $(NF-9), $(NF-3)}' $L/bench.log | sed 's/  */ /g'
grep -E "^(cudnn|==== torch)" $L/bench.log
grep -E "^stamps .*(alone|b2b)" $L/bench.log | sed -E 's/ ideal.*//' | cut -c1-200
grep -E "exit [1-9]|rror" $L/bench.log | head
