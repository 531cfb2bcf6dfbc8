# Session 24, call 2: RoPE's slots for fp8 caches (ops::DecodeCtasPerSm with RoPE's shared
# memory: 264 at D 128, 132 at D 256) against the count without it (FLASHJIT_DECODE_CTAS_PER_SM=3
# at D 128, as before session 24; =2 at D 256, as this session's first commit), three rounds
# interleaved, fp8 (e4m3) caches, configurations rope (32/8 heads, D 128) and rope256 (16/8,
# D 256). Then the consolidated run on the final tree: the whole GPU suite (JIT disabled, no
# compile allowed), demo, every bench with its PyTorch baseline, pytest, the Llama step, memcheck
# and racecheck on decode subsets; and gemma2 fp8 / bf16 over its grid (the default plans).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
N=$PWD/build-stage
start=$SECONDS
(
  export LD_LIBRARY_PATH=$N FLASHJIT_CACHE_DIR=$N/gpu-cache FLASHJIT_DISABLE_JIT=1
  G="--batches 1,4,8,16,32,64,128,256 --lengths 1024,2048,4096,8192,16384,32768"
  r=0
  for form in new old old new new old; do
    ((++r))
    for cfg in rope rope256; do
      unset FLASHJIT_DECODE_CTAS_PER_SM
      if [ $form = old ]; then
        [ $cfg = rope ] && export FLASHJIT_DECODE_CTAS_PER_SM=3 || export FLASHJIT_DECODE_CTAS_PER_SM=2
      fi
      echo "==== $cfg $form round $r ($(date +%T))" >> $OUT/rope_ab.log
      timeout 60 $N/flashjit_bench_decode --kv e4m3 --configs $cfg $G --plan >> $OUT/rope_ab.log 2>&1
      echo "exit $?" >> $OUT/rope_ab.log
    done
  done
  unset FLASHJIT_DECODE_CTAS_PER_SM
  echo "==== gemma2 grid" >> $OUT/gemma2.log
  timeout 60 $N/flashjit_bench_decode --kv e4m3 --configs gemma2 $G >> $OUT/gemma2.log 2>&1
  timeout 60 $N/flashjit_bench_decode --configs gemma2 $G >> $OUT/gemma2.log 2>&1
)
echo "rope ab + gemma2: $((SECONDS - start)) s"
grep -c "^decode" $OUT/rope_ab.log
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='batch decode: tail pieces small,batch decode: fp8 KV*,batch decode: dtypes\, head dims\, knobs,batch decode: production configurations small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: tail pieces small,batch decode: CTA index forms small'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "total: $((SECONDS - start)) s"
