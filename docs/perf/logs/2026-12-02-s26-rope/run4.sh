# Not run: no device could be started in time; its A/B went into call 5 (run5.sh).
# Session 26, call 4: the steps of a word's four frequencies read a word ahead (call 3's
# profile: most stalls of the RoPE loop waited on those shared-memory reads). Forms, interleaved:
# old (1694734, build-mini), s3 (4c4b82a, build-mini3), new (this tree, build-mini4); e4m3,
# configuration rope; the RoPE GPU case on new. Argument: the commit.
echo "$1" > "$OUT/commit.txt"
for m in mini mini3 mini4; do tar xzf build-pack/build-$m.tar.gz; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > $OUT/device.txt
start=$SECONDS
G="--batches 1,16,64 --lengths 1024,4096,16384 --plan"
r=0
for form in new s3 old old s3 new; do
  ((++r))
  N=$PWD/build-mini; [ $form = s3 ] && N=$PWD/build-mini3; [ $form = new ] && N=$PWD/build-mini4
  echo "==== e4m3 $form round $r ($(date +%T))" >> $OUT/ab.log
  LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1 \
    timeout 150 $N/flashjit_bench_decode --kv e4m3 --configs rope $G >> $OUT/ab.log 2>&1
  echo "exit $?" >> $OUT/ab.log
done
echo "ab: $((SECONDS - start)) s"
N=$PWD/build-mini4
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1
FLASHJIT_EXPECT_NO_COMPILE=1 timeout 200 $N/flashjit_gpu_tests "batch decode: RoPE at every head dim and KV dtype" 2>&1 | tail -3
python3 - <<'PY'
import sqlite3, os
c = sqlite3.connect(os.environ['FLASHJIT_CACHE_DIR'] + '/kernels.db')
r = c.execute("select cubin from kernels where name='decode_bf16_e4m3_h128_s4_rope'").fetchone()
open('/tmp/k.cubin', 'wb').write(r[0])
PY
cuobjdump -sass /tmp/k.cubin | gzip > $OUT/new_e4m3_rope.sass.gz
echo "total: $((SECONDS - start)) s"
