# Session 14 lead, call 2: why D 256 reads at 2.6 TB/s in either form. ncu (full set) of one
# D 256 launch (gemma2 B=64 L=4k, the split form and the s13 form) and of D 128 (benchmark
# configuration B=64 L=4k); then D 256 timed at groups 1 / 2 / 16, HND, page 64 beside D 128.
S=$PWD/build-ds-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/ds2; rm -rf $L; mkdir -p $L; start=$SECONDS
B=$S/flashjit_bench_decode
while read -r args; do echo "==== $args"; timeout 40 $B $args; done < docs/perf/logs/2026-11-30-s14-dsplit/shapes2.txt > $L/shapes.log 2>&1
echo "shapes: $((SECONDS - start)) s"
tar czf $OUT/ds2.tgz -C $L .
N="ncu --set full --clock-control none -k regex:flashjit_decode$ -c 1"
timeout 100 $N $B --configs gemma2 --shapes 64x4096 --once > $L/ncu_d256_split.txt 2>&1; echo "ncu1 $? $((SECONDS - start)) s"
tar czf $OUT/ds2.tgz -C $L .
timeout 100 $N $B --shapes 64x4096 --once > $L/ncu_d128.txt 2>&1; echo "ncu2 $? $((SECONDS - start)) s"
tar czf $OUT/ds2.tgz -C $L .
FLASHJIT_DECODE_D_SPLIT=0 timeout 100 $N $B --configs gemma2 --shapes 64x4096 --once > $L/ncu_d256_s13.txt 2>&1; echo "ncu3 $? $((SECONDS - start)) s"
tar czf $OUT/ds2.tgz -C $L .
grep -E "^====|^decode" $L/shapes.log | awk '{print $2, $3, $4, $5, $6, $7, $8, $9}' | cut -c1-150
for f in $L/ncu_*.txt; do echo "== $f"; grep -E "Memory Throughput|DRAM Throughput|Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|L2 Hit Rate|Mem Pipes Busy|Stall|No Eligible" $f | head -20; done
