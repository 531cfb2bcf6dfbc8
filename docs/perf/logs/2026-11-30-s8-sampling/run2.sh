#!/usr/bin/env bash
# Session 8 (sampling), call 2 (argument: its timeout_s): the final defaults (digits 2-3 scanned
# in integers by every warp, except in clusters of 256-thread blocks) and the profile that call 1
# lost (ncu 2025.3 knows --warp-sampling-interval, not --sampling-interval). The top-p bench rows
# and stamps, the same-tokens and determinism GPU cases (JIT disabled, no compile), then the ncu
# source-level profile (SourceCounters + WarpStateStats, warp sampling every 32 cycles) of the
# default at B = 1 and B = 64 x 128256 flat (line-info cubins, FLASHJIT_LINE_INFO=1, prewarmed)
# with its per-line / per-instruction exports and nvdisasm's line table of the same cubins.
set -u
LIMIT=${1:-100}
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
OUT= timeout $(left 30) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $O/bench_top_p.log 2>&1
echo "bench exit $?" >> $O/bench_top_p.log; t bench top_p
OUT= timeout $(left 20) $S/flashjit_bench_sampling --only "B=0" --no-sweep --stamps > $O/bench_stamps.log 2>&1
echo "bench exit $?" >> $O/bench_stamps.log; t stamps
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 30) $S/flashjit_gpu_tests "top-p: the fast digit scans*,same seed and offset*" --durations yes > $O/tests.log 2>&1
echo "tests exit $?" >> $O/tests.log; t tests
P=$OUT/prof; mkdir -p $P
# NVRTC wrote the headers' paths as /work/main/<name> (the compiling process's directory): the
# same paths here, for ncu's source view.
for d in sampling common; do
  [ -e /work/main/$d ] || { mkdir -p /work/main && ln -s $ROOT/templates/$d /work/main/$d; }
done
ls -la /work/main > $P/paths.txt 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | tail -1)
for b in 1 64; do
  (cd templates && FLASHJIT_LINE_INFO=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 40) $NCU \
     --clock-control none --section SourceCounters --section WarpStateStats --import-source yes \
     --warp-sampling-interval 0 -k regex:flashjit_sampling -c 1 -f -o $P/b$b \
     $ROOT/$S/flashjit_bench_sampling --once --only "top_p0.9 B=$b V=128256 std1" --no-sweep) \
    > $P/ncu_b$b.log 2>&1
  echo "ncu exit $?" >> $P/ncu_b$b.log; t ncu b$b
  for ps in cuda sass; do
    timeout $(left 20) $NCU --import $P/b$b.ncu-rep --page source --csv --print-source $ps \
      > $P/b${b}_source_$ps.csv 2> $P/b${b}_source_$ps.err
  done
  timeout $(left 20) $NCU --import $P/b$b.ncu-rep --page details --print-details all \
    > $P/b${b}_details.txt 2>&1
  t exports b$b
done
for c in $S/lineinfo/*.cubin; do
  timeout $(left 20) nvdisasm --print-line-info -c "$c" > $P/$(basename $c .cubin).sass.txt 2>&1
done
t nvdisasm
grep -h "ncu exit\|==ERROR\|==WARNING" $P/*.log | head -20 > $O/ncu_summary.txt
tar czf $OUT/prof.tgz -C $OUT prof
[ $(stat -c %s $OUT/prof.tgz) -gt 15000000 ] && tar czf $OUT/prof.tgz -C $OUT --exclude="*.ncu-rep" prof
rm -rf $P
tar czf $OUT/logs.tgz -C $O . 2>/dev/null
ls -la $OUT
grep -E "passed|failed|FAILED|exit" $O/tests.log | tail -4
grep -E 'top_p0.9(_exactprefix)? B=' $O/bench_top_p.log | awk '{print $2,$3,$4,$5,$6,$(NF-3)}'
cat $O/ncu_summary.txt $L
rm -rf $O
