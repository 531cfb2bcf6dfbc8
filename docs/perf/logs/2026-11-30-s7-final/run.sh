# Session 7's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline and the cascade A/B, pytest, the Llama step, one Python-overhead run, and the
# sanitizers over the cases of the code changed this session. Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=120
export MEMCHECK_TESTS='[cascade],*fast digit scans*,*bad rows*,*short units and merges'
export RACECHECK_TESTS='same seed and offset*,*short units and merges,*CUDA graph*'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -80
