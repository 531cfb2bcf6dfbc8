# Session 26, call 5: fp8 decode with RoPE, three forms, interleaved: old (1694734: keys
# converted and rotated into 16-bit rows in shared memory), s3 (4c4b82a: keys turned in
# registers, call 3's form) and new (the final tree: the steps of a word's frequencies read a
# word ahead); configuration rope (32/8, D 128) with e4m3, rope256 (D 256, unchanged path) and
# bf16 rope (unchanged kernels) as the noise controls. Then the consolidated run of the final
# tree (the GPU suite with JIT disabled, demo, every bench beside PyTorch, pytest, the Llama
# step, memcheck with the RoPE and fp8 cases, racecheck). Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
tar xzf build-pack/build-mini.tar.gz
tar xzf build-pack/build-mini3.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new s3 old old s3 new; do
  ((++r))
  N=$PWD/build-mini; [ $form = s3 ] && N=$PWD/build-mini3; [ $form = new ] && N=$PWD/build-stage
  for kv in e4m3 bf16; do
    K=""; C="--configs rope"
    [ $kv = e4m3 ] && K="--kv e4m3" && C="--configs rope,rope256"
    [ $form = s3 ] && [ $kv = bf16 ] && continue
    echo "==== $kv $form round $r ($(date +%T))" >> $OUT/rope_ab.log
    LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
      timeout 150 $N/flashjit_bench_decode $K $C $G >> $OUT/rope_ab.log 2>&1
    echo "exit $?" >> $OUT/rope_ab.log
  done
done
echo "rope ab: $((SECONDS - start)) s"
grep -c "^decode" $OUT/rope_ab.log
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='batch decode: RoPE at every head dim and KV dtype,batch decode: tail pieces small,batch decode: fp8 KV*,batch decode: dtypes\, head dims\, knobs,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: tail pieces small,batch decode: CTA index forms small'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
# At most a few files come back: keep the four above, the rest in one archive.
(cd $OUT && ls | grep -vxE 'commit.txt|device.txt|rope_ab.log|all.txt' > /tmp/rest.txt &&
  tar czf /tmp/rest.tgz -T /tmp/rest.txt && xargs rm -rf < /tmp/rest.txt && mv /tmp/rest.tgz rest.tgz)
ls $OUT
echo "total: $((SECONDS - start)) s"
