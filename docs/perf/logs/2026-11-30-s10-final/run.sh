# Session 10's consolidated call: the whole GPU suite (one process per case), demo, every bench with
# its PyTorch baseline (now with the queued figure beside synced and back to back), pytest, the
# Llama step, the Python overhead (median of 5 alternating runs), and the sanitizers over the cases
# of the code changed this session (decode's per-CTA stamps variant, sampling's pushed digit-3
# counts through the fast-digit-scan and determinism cases, and round 2's B = 1 form under racecheck).
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
export SKIP=overhead-ab RACECHECK_TIMEOUT=150
export MEMCHECK_TESTS='*per-CTA stamps small*,*fast digit scans*'
export RACECHECK_TESTS='*per-CTA stamps small*,same seed and offset*'
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
# Round 2's B = 1 default (form 15) under racecheck on its own (its helper's racecheck ran out of
# time beside memcheck).
export FLASHJIT_CACHE_DIR=$PWD/build-stage/gpu-cache LD_LIBRARY_PATH=$PWD/build-stage
FLASHJIT_SAMPLING_CANDIDATES=15 FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 120 \
  compute-sanitizer --tool racecheck --error-exitcode 3 build-stage/flashjit_gpu_tests \
  "same seed and offset*" > "$OUT/racecheck15.txt" 2>&1
echo "racecheck form 15 exit: $?" >> "$OUT/all.txt"
tail -3 "$OUT/racecheck15.txt" >> "$OUT/all.txt"
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/all.txt" | tail -80
