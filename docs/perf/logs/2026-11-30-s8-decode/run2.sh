#!/bin/bash
# Device call 2 for decode (session 8, diagnostic, binaries of 0c89e0f whose default path is
# the kept cp.async kernel): ncu stall reasons per issued instruction, DRAM throughput and
# instruction counts of one launch of the default kernel at B=16 L=4k, B=64 L=1k (persistent)
# and B=256 L=16k (the 93 % reference), clocks not locked (as in the bench).
S=$PWD/build-decode-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_DISABLE_JIT=1
export FLASHJIT_CACHE_DIR=$S/gpu-cache
L=${OUT:-/tmp}/s8b; mkdir -p $L
cp docs/perf/logs/2026-11-30-s8-decode/commit.txt $L/
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__cycles_active.avg,sm__cycles_elapsed.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread'
for sh in 16x4096 64x1024 256x16384; do
  echo "==== $sh ($(date +%T))"
  timeout 50 ncu --clock-control none --csv --metrics "$M" -k regex:flashjit_decode -c 1 \
    $S/flashjit_bench_decode --once --shapes $sh > $L/ncu_$sh.csv 2> $L/ncu_$sh.err
  echo "exit $?"
done
cd $L && for f in ncu_*.csv; do echo "== $f"; grep -E '^"[0-9]' $f | awk -F'","' '{v=$NF; gsub(/"/,"",v); print $(NF-2), v}' | awk '$1 !~ /stalled/ || $2+0 >= 0.05'; done
