# Session 26, call 1: do decode kernels with RoPE gain from more warps an SM? They are bound by
# instruction latency (two warps a scheduler). Forms, two rounds each, interleaved, the kernels of
# 1694734 (FLASHJIT_DECODE_STAGES sets the pipeline depth; the plans count the CTAs it allows):
#   def  : bf16 3 stages (2 CTAs an SM), e4m3 4 stages (2 CTAs, the 16 KB convert buffer)
#   s3   : e4m3 3 stages (3 CTAs)      s2: bf16 and e4m3 2 stages (3 CTAs)
# configuration rope (32/8 heads, D 128, page 16), and base (no RoPE) as the reference. Then
# Nsight Compute on e4m3 rope B=64 L=16k (default form). Argument: the commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-mini.tar.gz
N=$PWD/build-mini
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
bench() {  # $1 label, $2 stages ('' default), rest: bench args
  local label=$1 st=$2; shift 2
  echo "==== $label round $r ($(date +%T))" >> $OUT/ab.log
  if [ -n "$st" ]; then
    FLASHJIT_DECODE_STAGES=$st timeout 150 $N/flashjit_bench_decode "$@" $G >> $OUT/ab.log 2>&1
  else
    timeout 150 $N/flashjit_bench_decode "$@" $G >> $OUT/ab.log 2>&1
  fi
  echo "exit $?" >> $OUT/ab.log
}
for r in 1 2; do
  bench "e4m3 def" "" --kv e4m3 --configs rope,base
  bench "e4m3 s3" 3 --kv e4m3 --configs rope
  bench "e4m3 s2" 2 --kv e4m3 --configs rope
  bench "bf16 def" "" --configs rope,base
  bench "bf16 s2" 2 --configs rope
done
echo "ab: $((SECONDS - start)) s"
grep -c "^decode" $OUT/ab.log
timeout 180 ncu --clock-control none --kernel-name regex:flashjit_decode --launch-count 1 \
  --set full --import-source no -o $OUT/rope_e4m3 -f $N/flashjit_bench_decode --kv e4m3 \
  --configs rope --batches 64 --lengths 16384 --once > $OUT/ncu.log 2>&1
echo "ncu exit $?"
ncu -i $OUT/rope_e4m3.ncu-rep --page details > $OUT/rope_e4m3.details.txt 2>&1
rm -f $OUT/rope_e4m3.ncu-rep
grep -E "Duration|Issue Slots Busy|Eligible Warps|No Eligible|Warp Cycles Per Issued|Executed Ipc A|Achieved Occupancy|DRAM Throughput|Registers Per|Shared Memory Config|Block Limit" $OUT/rope_e4m3.details.txt | head -30
echo "total: $((SECONDS - start)) s"
