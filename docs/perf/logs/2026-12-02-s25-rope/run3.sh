# Session 25, call 3: decode with RoPE, three forms of the keys' rotation, two rounds each,
# interleaved: old (session 24: exp2f and the accurate sincosf per key and dim, element by
# element), mid (854cd9b: a table of the frequencies in turns, rope::CosSinTurns for every pair,
# 16-byte row accesses) and new (the final tree: each lane keeps kD/64 dims over all 16 rows of
# its warp, its angles exact at the warp's first key and stepped one position a row by the
# table's cos / sin of one position's angle). Configurations rope (32/8, D 128) and rope256
# (16/8, D 256), bf16 and e4m3 caches. Then the consolidated run of the final tree (the GPU suite
# with JIT disabled, demo, every bench beside PyTorch, pytest, the Llama step, memcheck with the
# RoPE cases, racecheck). Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
tar xzf build-pack/build-old.tar.gz
tar xzf build-pack/build-mid.tar.gz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new old mid mid old new; do
  ((++r))
  N=$PWD/build-$form
  [ $form = new ] && N=$PWD/build-stage
  for kv in bf16 e4m3; do
    K=""
    [ $kv = e4m3 ] && K="--kv e4m3"
    echo "==== $kv $form round $r ($(date +%T))" >> $OUT/rope_ab.log
    LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
      timeout 150 $N/flashjit_bench_decode $K --configs rope,rope256 $G >> $OUT/rope_ab.log 2>&1
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
