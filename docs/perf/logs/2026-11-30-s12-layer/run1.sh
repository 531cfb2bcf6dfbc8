# Session 12 "layer" call 1: the new forms' correctness cases, then the A/B lists of
# flashjit_bench_norm --ab and flashjit_bench_page --ab (five rounds each), and whether the
# driver's device-to-device copy is a kernel (ncu sees kernels only).
S=build-layer-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=/tmp/s12layer1; rm -rf $L; mkdir -p $L
cat $S/commit.txt > $L/commit.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv > $L/device.txt 2>&1
date -u +%T > $L/steps.txt
for t in "norm: cache hints*" "append_paged_kv_cache: the token tile*"; do
  timeout 60 $S/flashjit_gpu_tests "$t" > "$L/test-${t%%:*}.log" 2>&1; echo "test $t rc $?" | tee -a $L/steps.txt
  tail -3 "$L/test-${t%%:*}.log"
done
date -u +%T >> $L/steps.txt
(cd $L && OUT=$L timeout 150 $OLDPWD/$S/flashjit_bench_norm --ab > $L/bench_norm_ab.log 2>&1); echo "norm rc $?" | tee -a $L/steps.txt
date -u +%T >> $L/steps.txt
(cd $L && OUT=$L timeout 90 $OLDPWD/$S/flashjit_bench_page --ab > $L/bench_page_ab.log 2>&1); echo "page rc $?" | tee -a $L/steps.txt
date -u +%T >> $L/steps.txt
timeout 45 ncu --target-processes all python3 -c "
import torch
a = torch.randn(2**26, device='cuda', dtype=torch.bfloat16); b = torch.empty_like(a)
torch.cuda.synchronize(); b.copy_(a); torch.cuda.synchronize(); print('copied', a.numel())
" > $L/ncu_copy.log 2>&1; echo "ncu rc $?" | tee -a $L/steps.txt
date -u +%T >> $L/steps.txt
tar czf $OUT/logs1.tgz -C $L .
# Summary: rep 0 of each list, compact.
awk -F'\t' '{print}' /dev/null
grep -E "rep 0|^(rmsnorm|copy_ours|device_copy|append_paged_kv)" $L/bench_norm_ab.log | head -45 | cut -c1-22,64-200
grep -E "^(device_copy|append_paged_kv)" $L/bench_page_ab.log | head -20 | cut -c1-22,40-200
grep -E "PROF|copy|kernel" $L/ncu_copy.log | head -8
