# Session 12, after re-reading the change: the [decode] GPU cases (one process per case, JIT
# disabled, no compile allowed) on the test refactor (PlanCase / DownloadPlanHeader) and the decode
# knobs' EnvMode, then memcheck of the small pair-stealing case and the persistent graph case.
# Argument: the staged commit.
echo "$1" > "$OUT/commit.txt"
S=build-stage
export LD_LIBRARY_PATH=$PWD/$S FLASHJIT_LIBRARY=$PWD/$S/libflashjit.so FLASHJIT_CACHE_DIR=$PWD/$S/gpu-cache FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1
$S/flashjit_gpu_tests "[decode]" --list-test-names-only | grep -vE '^(GPU tests: seed|engine: )' | grep . > /tmp/names
fail=0
while IFS= read -r name; do echo "$name"; done < /tmp/names | xargs -P 8 -I{} bash -c 'n="{}"; timeout 300 '"$S"'/flashjit_gpu_tests "${n//,/\\,}" > "/tmp/case-$(echo "$n" | md5sum | cut -c1-8).log" 2>&1; echo "exit $? $n"' | tee "$OUT/cases.txt"
grep -c "^exit 0 " "$OUT/cases.txt"; grep -v "^exit 0 " "$OUT/cases.txt" || echo "all decode cases exit 0"
cat /tmp/case-*.log | grep -E "^All tests passed|test cases failed|FAILED" | sort | uniq -c | head
cat /tmp/case-*.log | grep -E "^engine:" | awk '{s+=$2} END {print "compiles:", s}'
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 3 $S/flashjit_gpu_tests "*pair stealing small*,*graph replays correctly on a forced persistent*" 2>&1 | tail -4
echo "memcheck exit: ${PIPESTATUS[0]}"
