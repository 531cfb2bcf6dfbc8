# Session 21, call 2: the consolidated run on the final tree (call 1's prefetch field reverted:
# the kernels are session 20's; the suite gains a bf16 RoPE case of one- to few-key rows and
# the LSE tolerance for in-kernel RoPE): the whole GPU suite, demo, every bench with its
# PyTorch baseline, pytest, the Llama step, memcheck and racecheck on decode subsets.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
tar xzf build-pack/build-stage.tar.gz
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='batch decode: fp8 KV*,batch decode: page sizes that do not divide a tile,batch decode: production configurations small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
