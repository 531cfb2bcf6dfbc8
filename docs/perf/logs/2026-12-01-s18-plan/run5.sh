# Session 18, call 5: programmatic dependent launch and plans of CTAs that leave slots free.
# Call 4 found fp8 plans of few lone CTAs 25-36 % slower back to back with PDL than without,
# and level queued. Four forms, two rounds interleaved, 100 fp8 shapes (5 configurations x 1-256
# requests x 512-16k keys), the same binaries and kernels:
#   A = the default (lone tile 0.8, PDL by its rule), B = A with FLASHJIT_DECODE_PDL=0,
#   C = FLASHJIT_DECODE_PLAN_MODEL=s18l (lone tile 0.75), D = C with FLASHJIT_DECODE_PDL=0.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/s18.tar.gz
export FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
start=$SECONDS
L=/tmp/s18e; rm -rf $L; mkdir -p $L
N=$PWD/build-s18
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
CF="--kv e4m3 --configs base,tp8,qwen7b,mha,page1 --lengths 512,1024,2048,4096,16384"
for round in 1 2; do
  for t in A B C D; do
    echo "==== fp8 $t round $round ($(date +%T))" >> $L/pdl.log
    envs="FLASHJIT_X=1"
    case $t in B) envs="FLASHJIT_DECODE_PDL=0";; C) envs="FLASHJIT_DECODE_PLAN_MODEL=s18l";; D) envs="FLASHJIT_DECODE_PLAN_MODEL=s18l FLASHJIT_DECODE_PDL=0";; esac
    env $envs timeout 120 $N/flashjit_bench_decode --plan $CF >> $L/pdl.log 2>&1
    echo "exit $?" >> $L/pdl.log
    tar czf $OUT/logs.tgz -C $L .
  done
  [ $((SECONDS - start)) -gt 400 ] && break
done
grep -E "^====|^exit" $L/pdl.log
echo "total: $((SECONDS - start)) s"
