#!/usr/bin/env bash
# Session 5 "layer" helper, the one H200 call. Phase A (CPU-bound references, in parallel): the
# [norm] and [page] GPU tests (JIT disabled, no compile), memcheck and racecheck of the bulk
# rmsnorm's many-rows-per-block case. Phase B, each alone on the GPU: bench_norm --sweep (the
# bulk kernel, the bulk copy, the driver copy of the same bytes), bench_page (with the slot-row
# patch), torch_layer_ops.py, then an nsys timeline of bench_page --timeline if nsys exists.
set -u
S=build-rope-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; date; echo "nsys: $(which nsys)"; ls -d /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null; } > $O/device.txt 2>&1
cat $O/device.txt
export FLASHJIT_DISABLE_JIT=1
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 130 $S/flashjit_gpu_tests "[norm]" --durations yes > $O/tests_norm.log 2>&1 &
n=$!
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 110 $S/flashjit_gpu_tests "[page]" --durations yes > $O/tests_page.log 2>&1 &
p=$!
timeout 110 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "[bulk_sanitize]" > $O/memcheck.log 2>&1 &
m=$!
timeout 110 compute-sanitizer --tool racecheck --error-exitcode 3 $S/flashjit_gpu_tests "[bulk_sanitize]" > $O/racecheck.log 2>&1 &
r=$!
wait $n; ne=$?; wait $p; pe=$?; wait $m; me=$?; wait $r; re=$?
st "norm tests $ne page tests $pe memcheck $me racecheck $re"
tail -n 3 $O/tests_norm.log $O/tests_page.log; tail -n 3 $O/memcheck.log $O/racecheck.log
OUT= timeout 45 stdbuf -oL $S/flashjit_bench_norm --sweep > $O/bench_norm.log 2>&1
st "bench_norm exit $?"
OUT= timeout 30 stdbuf -oL $S/flashjit_bench_page > $O/bench_page.log 2>&1
st "bench_page exit $?"
timeout 30 python3 tools/bench/torch_layer_ops.py > $O/torch.log 2>&1
st "torch exit $?"
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  OUT= timeout 40 $NSYS profile -t cuda --sample=none --cpuctxsw=none -o /tmp/pt -f true $S/flashjit_bench_page --timeline > $O/nsys_bench.log 2>&1
  st "nsys profile exit $?"
  timeout 30 $NSYS stats -r cuda_gpu_trace,cuda_api_trace -f csv -o /tmp/pt /tmp/pt.nsys-rep > $O/nsys_stats.log 2>&1
  st "nsys stats exit $?"
  cp /tmp/pt_cuda_gpu_trace.csv /tmp/pt_cuda_api_trace.csv $O/ 2>/dev/null
  python3 docs/perf/logs/2026-11-29-s5-layer/nsys_gaps.py /tmp/pt_cuda_gpu_trace.csv /tmp/pt_cuda_api_trace.csv > $O/nsys_gaps.txt 2>&1
  cat $O/nsys_gaps.txt
else
  st "no nsys on the device"
fi
grep -E "8192x8192|16384x4096|4096x16384|device_copy" $O/bench_norm.log | cut -c1-190
grep -E "16384|copy" $O/bench_page.log | head -12 | cut -c1-190
grep -E "copy|rms_norm |index_put" $O/torch.log
