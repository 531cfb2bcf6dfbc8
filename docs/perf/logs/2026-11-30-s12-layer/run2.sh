# Session 12 "layer" call 2: fixed cost against slope. flashjit_bench_norm --ab2 (driver copy, our
# copy in the norm's structure, rmsnorm, 4 .. 32768 rows of 8192) and flashjit_bench_page --ab2
# (driver copy, token tile, token tile without its index chain, 64 .. 32768 tokens), 3 rounds.
S=build-layer-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s12layer2; rm -rf $L; mkdir -p $L
cat $S/commit.txt > $L/commit.txt
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv > $L/device.txt 2>&1
date -u +%T > $L/steps.txt
(cd $L && OUT=$L timeout 150 $OLDPWD/$S/flashjit_bench_norm --ab2 > $L/bench_norm_ab2.log 2>&1); echo "norm rc $?" | tee -a $L/steps.txt
date -u +%T >> $L/steps.txt
(cd $L && OUT=$L timeout 90 $OLDPWD/$S/flashjit_bench_page --ab2 > $L/bench_page_ab2.log 2>&1); echo "page rc $?" | tee -a $L/steps.txt
date -u +%T >> $L/steps.txt
tar czf $OUT/logs2.tgz -C $L .
grep -E "rep 0|^(rmsnorm|copy_ours|device_copy|append_paged_kv)" $L/bench_norm_ab2.log | head -18 | cut -c1-200
grep -E "^(device_copy|append_paged_kv)" $L/bench_page_ab2.log | head -15 | cut -c1-200
