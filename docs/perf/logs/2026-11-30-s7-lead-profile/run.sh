# Where the memory-bound kernels stand: one launch per shape (--once) of every layer-op bench, the
# cascade merge and three decode shapes under ncu, a few metrics each (duration, SM and DRAM
# throughput, instructions, registers, occupancy). Diagnostic only. The benches run with OUT unset
# (their .tsv tables would take the call's files). BENCHES: the bench list.
set -u
S=build-stage
export FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_DISABLE_JIT=1
echo "$1" > "$OUT/commit.txt"
m=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum
for b in ${BENCHES:-norm page rope activation cascade}; do
  OUT= timeout 100 ncu --csv --metrics $m $S/flashjit_bench_$b --once > "$OUT/ncu-$b.csv" 2> "$OUT/ncu-$b.err"
  echo "$b exit $?"
done
OUT= timeout 100 ncu --csv --metrics $m $S/flashjit_bench_decode --once --shapes 64x1024,256x1024,16x4096,256x16384 > "$OUT/ncu-decode.csv" 2> "$OUT/ncu-decode.err"
echo "decode exit $?"
cd "$OUT" && tar czf ncu.tgz ncu-*.csv ncu-*.err && rm -f ncu-*.err ncu-*.csv && ls -la
