# Session 16's sixth call (final tree, build-s6 on call 2's kernel cache; the host code changed
# since call 1's suite): the GPU suite, demo, pytest, the Llama step and the Python overhead
# bench on the final tree (no benches, no PyTorch, no sanitizers).
echo "$1" > "$OUT/commit.txt"
export SKIP="bench cascade-ab torch overhead-ab sanitize"
start=$SECONDS
tools/gpu-full-run.sh run build-s6 > "$OUT/all.txt" 2>&1
grep -E "^==== |gpu tests:|^FAIL|exit:|passed|failed" "$OUT/all.txt" | tail -30
echo "total: $((SECONDS - start)) s"
