# Session 8's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline and the cascade A/B, pytest, the Llama step, one Python-overhead run, and the
# sanitizers over the cases of the code changed this session. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='*fast digit scans*,*bad rows*,layernorm: large mean*,top-p: both kernels*'
export RACECHECK_TESTS='layernorm: large mean*,same seed and offset*'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -80
