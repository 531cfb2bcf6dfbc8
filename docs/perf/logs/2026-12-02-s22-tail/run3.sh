# Session 22, call 3: the consolidated run on the final tree (tail pieces on by default at 3 %
# for 16-bit KV): the whole GPU suite, demo, every bench with its PyTorch baseline, pytest, the
# Llama step, memcheck and racecheck on decode subsets (the tail cases among them).
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
