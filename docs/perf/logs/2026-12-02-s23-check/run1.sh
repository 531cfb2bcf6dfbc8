# Session 23, call 1: the consolidated run on HEAD (31d9209, never run on a GPU in session 22):
# the whole GPU suite (JIT disabled, no compile allowed), demo, every bench with its PyTorch
# baseline, pytest, the Llama step, memcheck and racecheck on decode subsets. Then a diagnostic
# A/B: tail pieces on fp8 (e4m3) caches, which the default leaves uncut (JIT allowed there: the
# device's fp8 plans take 396 slots, which the host's dry run cannot see; compiles are counted).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='batch decode: tail pieces small,batch decode: fp8 KV*,batch decode: page sizes that do not divide a tile,batch decode: production configurations small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: tail pieces small,batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
N=$PWD/build-stage
export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache
unset FLASHJIT_DISABLE_JIT FLASHJIT_EXPECT_NO_COMPILE
SH="8x32768,16x32768,32x16384,32x32768,24x32768,48x32768"
r=0
for t in def 3,0,2 3,0,2 def; do
  [ $((SECONDS - start)) -gt 540 ] && break
  if [ "$t" = def ]; then unset FLASHJIT_DECODE_TAIL; else export FLASHJIT_DECODE_TAIL=$t; fi
  echo "==== fp8 tail $t round $((++r)) ($(date +%T))" >> $OUT/fp8_ab.log
  timeout 60 $N/flashjit_bench_decode --kv e4m3 --batches 8,16,24,32,48 --lengths 16384,32768 \
    --shapes $SH --plan >> $OUT/fp8_ab.log 2>&1; echo "exit $?" >> $OUT/fp8_ab.log
done
grep "^decode\|^plan\|^exit\|compile" $OUT/fp8_ab.log | cut -c1-160 | head -80
echo "total: $((SECONDS - start)) s"
