# Session 25, call 2 (diagnostic): where decode with RoPE spends its time. SASS of the RoPE and
# plain variants (bf16 and e4m3 at D 128), and Nsight Compute (clocks left alone) on one call of
# rope / base at B=64 L=16k: scheduler and warp-state statistics, and the per-instruction stall
# samples of the source page. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1
start=$SECONDS
python3 - <<'PY'
import sqlite3, os
c = sqlite3.connect(os.environ['FLASHJIT_CACHE_DIR'] + '/kernels.db')
for name in ['decode_bf16_bf16_h128_s3_rope', 'decode_bf16_bf16_h128_s3', 'decode_bf16_e4m3_h128_s4_rope', 'decode_bf16_bf16_h128_s3_rope_fix']:
    r = c.execute("select cubin from kernels where name=?", (name,)).fetchone()
    if r: open(f'/tmp/{name}.cubin', 'wb').write(r[0])
PY
for f in /tmp/decode_*.cubin; do cuobjdump -sass $f > $OUT/$(basename $f .cubin).sass 2>&1; done
ls -la $OUT
run_ncu() {  # $1: report name, rest: bench arguments
  local name=$1; shift
  timeout 180 ncu --clock-control none --kernel-name regex:flashjit_decode --launch-count 1 \
    --set full --import-source no -o $OUT/$name -f $N/flashjit_bench_decode "$@" --once > $OUT/$name.log 2>&1
  echo "ncu $name exit $?"
  ncu -i $OUT/$name.ncu-rep --page details > $OUT/$name.details.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name.source.csv 2>&1
  echo "$name: $(wc -l < $OUT/$name.source.csv) source lines"
}
run_ncu rope_bf16 --configs rope --batches 64 --lengths 16384
run_ncu rope_e4m3 --kv e4m3 --configs rope --batches 64 --lengths 16384
run_ncu base_bf16 --configs base --batches 64 --lengths 16384
grep -E "Duration|Issue Slots Busy|Eligible Warps|No Eligible|Warp Cycles Per Issued|Executed Ipc A|Achieved Occupancy|DRAM Throughput" $OUT/*.details.txt | head -60
echo "total: $((SECONDS - start)) s"
