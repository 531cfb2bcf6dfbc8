# Session 16's third call (tree: FLASHJIT_DECODE_LAUNCH_CLUSTER=2, stream-mode plans without a
# cluster merge launched in clusters of 2; host code only, kernels as staged for call 2): decode
# GPU cases under the knob (8 processes at a time), then stream-mode A/B (knob unset / 2) over the
# configurations at 256-16k keys and the benchmark grid, two rounds interleaved.
echo "$1" > "$OUT/commit.txt"
S=$PWD/build-s3
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 PYTHONUNBUFFERED=1
start=$SECONDS
L=/tmp/s16c; rm -rf $L; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $L/device.txt
printf '%s\n' "batch decode: dtypes\, head dims\, knobs" "batch decode: mixed lengths\, page sizes\, GQA ratios\, layouts" \
  "batch decode: production configurations" "batch decode: split requests merged over many partials" \
  "batch decode: CTA index forms small" "batch decode: split requests merged small" \
  "batch decode: fp8 KV\, every head dim and dtype pair\, subnormal codes" \
  "batch decode: programmatic dependent launch over chained runs" "batch decode: persistent grid over ragged batches" > $L/cases.txt
export S L
cat $L/cases.txt | xargs -d '\n' -P 8 -I{} bash -c 'FLASHJIT_DECODE_LAUNCH_CLUSTER=2 timeout 200 $S/flashjit_gpu_tests "{}" > "$L/case_$(echo "{}" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? {}" >> $L/cases_exit.txt'
cat $L/cases_exit.txt; grep -h -E "^All tests passed|^test cases|FAILED" $L/case_*.log | sort | uniq -c
echo "cases: $((SECONDS - start)) s"
CFGS=base,tp8,tp4,qwen7b,mha,page1,page64,f16
for round in 1 2; do
  for k in 0 2; do
    echo "==== launch cluster $k round $round ($(date +%T))" >> $L/stream_ab.log
    FLASHJIT_DECODE_LAUNCH_CLUSTER=$k timeout 90 $S/flashjit_bench_decode --plan --configs $CFGS --lengths 256,512,1024,4096,16384 >> $L/stream_ab.log 2>&1
    echo "exit $?" >> $L/stream_ab.log
    echo "==== launch cluster $k round $round ($(date +%T))" >> $L/grid_ab.log
    FLASHJIT_DECODE_LAUNCH_CLUSTER=$k timeout 60 $S/flashjit_bench_decode --plan >> $L/grid_ab.log 2>&1
    echo "exit $?" >> $L/grid_ab.log
    tar czf $OUT/sweeps.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 400 ] && break
done
grep -E "^====|^exit" $L/*.log | tail -20
echo "total: $((SECONDS - start)) s"
