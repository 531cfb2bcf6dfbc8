#!/usr/bin/env bash
# Session 8 (sampling), the one A/B call (argument: its timeout_s). In order, each step limited to
# the time left: the top-p bench rows (the default, 10 = digits 2-3 in integers by every warp,
# cache64k / cache96k = the default with a slice cache, and the older forms; B = 1 / 64 / 256 x
# 128256 / 32000, flat and peaked), the phase stamps at B = 1 and 64 (-1, 10; at 64 the caches),
# an ncu source-level profile (SourceCounters + WarpStateStats, PC sampling every 32 cycles) of
# the default at B = 1 and B = 64 x 128256 flat (cubins with line info, FLASHJIT_LINE_INFO=1,
# prewarmed) with its per-line / per-instruction exports and nvdisasm's line table of the same
# cubins, PyTorch's sort-based baselines, the whole [sampling] GPU suite alone (JIT disabled, no
# compile allowed), then memcheck (4096 draws: the same-tokens case, every changed kernel) beside
# racecheck on the determinism case. Logs go into tarballs (at most 8 files come back).
set -u
LIMIT=${1:-300}
ROOT=$PWD
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$ROOT/$S/gpu-cache LD_LIBRARY_PATH=$ROOT/$S FLASHJIT_LIBRARY=$ROOT/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
O=$OUT/l; mkdir -p $O
cp $S/commit.txt $O/commit.txt
L=$O/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) ${SECONDS}s $*" >> $L; }
left() { local r=$((LIMIT - 8 - SECONDS)); [ $r -gt $1 ] && r=$1; [ $r -lt 1 ] && r=1; echo $r; }
t start
OUT= timeout $(left 40) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $O/bench_top_p.log 2>&1
echo "bench exit $?" >> $O/bench_top_p.log; t bench top_p
OUT= timeout $(left 40) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $O/bench_stamps.log 2>&1
echo "bench exit $?" >> $O/bench_stamps.log; t stamps
# The profile: from templates/, so that the line tables' header names (sampling/...) resolve.
P=$OUT/prof; mkdir -p $P
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | tail -1)
$NCU --version > $P/ncu_version.txt 2>&1
for b in 1 64; do
  (cd templates && FLASHJIT_LINE_INFO=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 60) $NCU \
     --clock-control none --section SourceCounters --section WarpStateStats --import-source yes \
     --sampling-interval 0 -k regex:flashjit_sampling -c 1 -f -o $P/b$b \
     $ROOT/$S/flashjit_bench_sampling --once --only "top_p0.9 B=$b V=128256 std1" --no-sweep) \
    > $P/ncu_b$b.log 2>&1
  echo "ncu exit $?" >> $P/ncu_b$b.log; t ncu b$b
  for ps in cuda sass; do
    timeout $(left 30) $NCU --import $P/b$b.ncu-rep --page source --csv --print-source $ps \
      > $P/b${b}_source_$ps.csv 2> $P/b${b}_source_$ps.err
  done
  timeout $(left 30) $NCU --import $P/b$b.ncu-rep --page details --print-details all \
    > $P/b${b}_details.txt 2>&1
  t exports b$b
done
for c in $S/lineinfo/*.cubin; do
  timeout $(left 20) nvdisasm --print-line-info --print-instruction-encoding -c "$c" \
    > $P/$(basename $c .cubin).sass.txt 2>&1 || \
  timeout $(left 20) nvdisasm -g -c "$c" > $P/$(basename $c .cubin).sass.txt 2>&1
done
t nvdisasm
grep -h "ncu exit\|==ERROR\|==WARNING\|==PROF==" $P/*.log | head -20 > $O/ncu_summary.txt
tar czf $OUT/prof.tgz -C $OUT prof
[ $(stat -c %s $OUT/prof.tgz) -gt 15000000 ] && tar czf $OUT/prof.tgz -C $OUT --exclude="*.ncu-rep" prof
rm -rf $P
timeout $(left 40) python3 tools/bench/torch_sampling.py > $O/torch_sampling.log 2>&1
echo "torch exit $?" >> $O/torch_sampling.log; t torch
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 160) $S/flashjit_gpu_tests "[sampling]" --durations yes > $O/tests.log 2>&1
echo "tests exit $?" >> $O/tests.log; t tests
R=$(left 100)
if [ $R -ge 10 ]; then
  FLASHJIT_SAMPLING_DRAWS=4096 timeout $R compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "top-p: the fast digit scans*" > $O/memcheck.log 2>&1 &
  PM=$!
  timeout $R compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "same seed and offset*" > $O/racecheck.log 2>&1
  echo "racecheck exit $? (limit ${R}s)" >> $O/racecheck.log; t racecheck
  wait $PM; echo "memcheck exit $? (limit ${R}s)" >> $O/memcheck.log; t memcheck
else
  t "sanitizers left out: ${R}s left"
fi
tar czf $OUT/logs.tgz -C $O . 2>/dev/null
ls -la $OUT
tail -n 2 $O/memcheck.log $O/racecheck.log
grep -E "^[0-9.]+ s: |FAILED|failed|passed|exit" $O/tests.log | tail -16
grep -E 'top_p0.9(_warpscan|_cache64k|_cache96k)? B=' $O/bench_top_p.log | grep V=128256 | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
cat $O/ncu_summary.txt
cat $L
rm -rf $O
