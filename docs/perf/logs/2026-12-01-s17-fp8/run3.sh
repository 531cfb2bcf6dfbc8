# Session 17, call 3 (final tree; every decode kernel re-keyed by the template changes): the whole
# GPU suite, demo, every bench with its PyTorch baseline, pytest, the Llama step, memcheck and
# racecheck on the fp8, small production and CTA-index decode cases. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP="overhead-ab cascade-ab" RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='batch decode: fp8 KV*,batch decode: production configurations small,single decode: dtypes*'
export RACECHECK_TESTS='batch decode: CTA index forms small'
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -60
echo "full run: $((SECONDS - start)) s"
