# Session 14, after the consolidated call: D 64's plans at 528 slots took the persistent grid at
# B=1 L=4k / 16k and B=16 L=1k / 4k (+15 to +33 % against session 13's plans). The d64
# configuration with FLASHJIT_DECODE_PERSISTENT=0 against the default, two rounds, plans printed.
echo "$1" > "$OUT/commit.txt"
S=$PWD/build-stage
export LD_LIBRARY_PATH=$S FLASHJIT_LIBRARY=$S/libflashjit.so FLASHJIT_CACHE_DIR=$S/gpu-cache \
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
L=$OUT; start=$SECONDS
for r in 1 2; do
  for pm in default 0; do
    echo "==== round $r persistent$pm" >> $L/d64_persistent.log
    if [ $pm = default ]; then timeout 30 $S/flashjit_bench_decode --plan --configs d64 >> $L/d64_persistent.log 2>&1
    else FLASHJIT_DECODE_PERSISTENT=0 timeout 30 $S/flashjit_bench_decode --plan --configs d64 >> $L/d64_persistent.log 2>&1; fi
    echo "$r $pm exit $?"
  done
done
echo "total: $((SECONDS - start)) s"
