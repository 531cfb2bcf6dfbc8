# Session 9's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline (launch forms and PDL included) and the cascade A/B, pytest, the Llama step,
# one Python-overhead run, and the sanitizers over the cases of the code changed this session
# (decode's PDL and clusters of 16, the layer ops' PDL chain, sampling's forms table).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='*programmatic dependent launch small*,*one cluster of 16 CTAs small*,pdl: small layer-op chain*,*fast digit scans*'
export RACECHECK_TESTS='*programmatic dependent launch small*,*one cluster of 16 CTAs small*,pdl: small layer-op chain*,same seed and offset*'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -80
