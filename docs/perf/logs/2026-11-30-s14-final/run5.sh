# Session 14, the final tree (D 64's plan fix 3702c1b and comments after the consolidated call):
# the whole GPU suite again (one process per case, JIT disabled, no compile) and the demo.
echo "$1" > "$OUT/commit.txt"
export SKIP="bench cascade-ab torch python overhead-ab sanitize"
start=$SECONDS
tools/gpu-full-run.sh run build-stage > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed" "$OUT/all.txt" | tail -20
echo "total: $((SECONDS - start)) s"
