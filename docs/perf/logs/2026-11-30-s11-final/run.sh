# Session 11's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline (synced / queued / back to back), pytest, the Llama step, the Python
# overhead, and the sanitizers over the cases of the code changed this session (decode's CTA index
# forms, sampling's relaxed end barrier and early owner inputs through the fast-digit-scan and
# determinism cases).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='*CTA index forms small*,*fast digit scans*'
export RACECHECK_TESTS='*CTA index forms small*,same seed and offset*'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -80
