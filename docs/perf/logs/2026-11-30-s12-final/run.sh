# Session 12's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline (synced / queued / back to back), pytest, the Llama step, the Python
# overhead, and the sanitizers over this session's changed code: pair stealing (off by default,
# forced on in its cases) and the CUDA-graph cases now captured through tests' CapturedGraph.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='*pair stealing small*,*a CUDA graph captured once*,pdl: layer-op chain captured*'
export RACECHECK_TESTS='*pair stealing small*,*a CUDA graph captured once*'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -80
