#!/usr/bin/env bash
# Session 10 (sampling), call 2 (argument: its timeout_s): the final default (digit 3's counts
# pushed in clusters of 8 and 2, the cubins call 1 ran as 14): the [sampling] GPU suite one
# process per case (8 at a time; names cut at their first comma), the top-p rows once, and the
# ncu launch call 1 lost to its kernel filter (the default at 64 x 128256 flat: DRAM bytes and L2
# hits, does pass 2 read the L2?).
set -u
LIMIT=${1:-150}
ROOT=$PWD
S=build-sampling-stage
export FLASHJIT_CACHE_DIR=$ROOT/$S/gpu-cache LD_LIBRARY_PATH=$ROOT/$S FLASHJIT_LIBRARY=$ROOT/$S/libflashjit.so
export FLASHJIT_DISABLE_JIT=1 PYTHONUNBUFFERED=1
O=$OUT/l; mkdir -p $O
cp $S/commit.txt $O/commit.txt
L=$O/device.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L
t() { echo "$(date +%T) ${SECONDS}s $*" >> $L; }
left() { local r=$((LIMIT - 6 - SECONDS)); [ $r -gt $1 ] && r=$1; [ $r -lt 1 ] && r=1; echo $r; }
pack() { tar czf $OUT/logs.tgz -C $O . 2>/dev/null; }
t start
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 20) ncu --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,gpu__time_duration.sum -k flashjit_sampling --launch-count 1 $S/flashjit_bench_sampling --once --only "top_p0.9 B=64 V=128256 std1" --no-sweep > $O/ncu_b64.log 2>&1
echo "ncu exit $?" >> $O/ncu_b64.log; t ncu; pack
$S/flashjit_gpu_tests "[sampling]" --list-test-names-only | grep -v '^$' | grep -vE '^(GPU tests: seed|engine: |[0-9]+ matching)' | sed 's/,.*$/*/' > $O/cases.txt
R=$(left 110)
run_case() {
  local n="$1" f="$O/case_$(echo "$1" | tr -c 'A-Za-z0-9' '_' | cut -c1-60).log"
  FLASHJIT_EXPECT_NO_COMPILE=1 timeout $R $S/flashjit_gpu_tests "$n" --durations yes > "$f" 2>&1
  echo "exit $? $n" >> "$f"
}
export -f run_case; export O S R
xargs -P 8 -I{} bash -c 'run_case "{}"' < $O/cases.txt
t tests; pack
FLASHJIT_EXPECT_NO_COMPILE=1 timeout $(left 15) $S/flashjit_bench_sampling --only top_p0.9 --no-sweep > $O/bench_top_p.log 2>&1
echo "bench exit $?" >> $O/bench_top_p.log; t bench; pack
for f in $O/case_*.log; do grep -hE "^exit|test cases|All tests passed" "$f" | tr '\n' ' '; echo; done | cut -c1-110
grep -hE 'top_p0.9(_form|_push)? B=(1|64) V=128256' $O/bench_top_p.log | sed 's/  */ /g; s/TB\/s//g; s/TFLOP\/s//g' | cut -c1-110
grep -E 'dram__bytes|hit_rate|lookup_hit|op_read.sum|duration|No kernels' $O/ncu_b64.log | head
cat $L
