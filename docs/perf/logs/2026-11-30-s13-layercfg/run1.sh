# Session 13 "layercfg" call 1: measure everything, change nothing. The --models mode of the four
# layer benches (tools/bench/model_shapes.h) and the same shapes in PyTorch eager
# (torch_layer_ops.py --models), one call, flashjit first then torch.
S=build-layercfg-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
L=/tmp/s13layercfg1; rm -rf $L; mkdir -p $L
cat $S/commit.txt > $L/commit.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv > $L/device.txt 2>&1
date -u +%T > $L/steps.txt
for b in norm activation rope page; do
  (cd $L && OUT=$L timeout 100 $OLDPWD/$S/flashjit_bench_$b --models > $L/bench_$b.log 2>&1); echo "$b rc $? $(date -u +%T)" | tee -a $L/steps.txt
done
(cd tools/bench && timeout 150 python3 torch_layer_ops.py --models > $L/torch_models.log 2>&1); echo "torch rc $? $(date -u +%T)" | tee -a $L/steps.txt
tar czf $OUT/logs1.tgz -C $L .
# Summary: row counts and the rows below 3.0 TB/s queued at >= 256 MB (a first look).
wc -l $L/*.tsv $L/torch_models.log
tail -3 $L/bench_*.log | cut -c1-200
