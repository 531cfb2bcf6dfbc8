#!/usr/bin/env bash
# One device call that checks and times everything: the whole GPU test suite (no NVRTC compile
# allowed), the checked demo, every benchmark beside its PyTorch baseline, the Python package's
# GPU tests, and compute-sanitizer memcheck/racecheck on a subset.
#
#   tools/gpu-full-run.sh stage [BUILD] [STAGE]   here: prewarm BUILD/gpu-cache in dry run and copy
#                                                 binaries + cache into STAGE, and pack STAGE into
#                                                 build-pack/STAGE.tar.gz (carry build-pack when
#                                                 STAGE and the tree pass the 64 MiB carry limit;
#                                                 then `tar xzf build-pack/STAGE.tar.gz` first)
#   tools/gpu-full-run.sh run [STAGE]             on the GPU machine; logs under $OUT
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}

# The GPU suite's case names, one a line ($1: the test binary). Catch2's listing exits with the
# number of cases it lists, so its status is not a failure.
suite_cases() {
  local listed
  listed=$("$1" --list-test-names-only) || true
  grep -vE '^(GPU tests: seed|engine: )' <<<"$listed" | grep .
}

if [ "$mode" = stage ]; then
  set -e
  build=${2:-build}
  stage=${3:-build-stage}
  export FLASHJIT_CACHE_DIR="$PWD/$build/gpu-cache" FLASHJIT_ARCH=sm_90a
  # The suite's dry run, one process per case, PREWARM_JOBS (default: the cores) at a time: each
  # case compiles its own variants, and a variant two cases need is compiled once (the cache's
  # per-key lock). A case that fails its dry run fails the stage.
  names=$(mktemp)
  FLASHJIT_DRY_RUN=1 suite_cases "$build/tests/flashjit_gpu_tests" >"$names"
  prewarm_case() {  # $1: a case's name (a Catch2 test spec needs its commas escaped)
    FLASHJIT_DRY_RUN=1 FLASHJIT_TEST_SEED=1 "$build/tests/flashjit_gpu_tests" "${1//,/\\,}" \
      >/dev/null 2>&1 || { echo "dry run failed: $1" >&2; return 255; }
  }
  export -f prewarm_case
  export build
  tr '\n' '\0' <"$names" | xargs -0 -P "${PREWARM_JOBS:-$(nproc)}" -n 1 bash -c 'prewarm_case "$1"' _
  echo "gpu suite dry run: $(wc -l <"$names") cases"
  rm -f "$names"
  for b in "$build"/tools/bench/flashjit_bench_*; do "$b" --dry-run; done
  # Decode's production configurations (`--configs`, the consolidated calls' sweep since
  # session 13; the default run covers only the benchmark configuration).
  "$build/tools/bench/flashjit_bench_decode" --dry-run \
    --configs base,tp8,tp4,qwen7b,gemma2,gemma2w,mha,d64,page1,page64,f16,rope,rope256 > /dev/null
  # and over fp8 (e4m3) caches (session 17).
  "$build/tools/bench/flashjit_bench_decode" --dry-run --kv e4m3 \
    --configs base,tp8,tp4,qwen7b,gemma2,mha,d64,page1,page64,f16,rope,rope256 > /dev/null
  # The sampling bench's phase-stamp variants (`--stamps`), for a diagnostic call.
  "$build/tools/bench/flashjit_bench_sampling" --dry-run --only "B=0" --no-sweep --stamps
  # The cascade A/B below: the merge with 1, 2 and 4 vectors per lane.
  for c in 1 2 4; do
    FLASHJIT_MERGE_CHUNKS=$c FLASHJIT_DRY_RUN=1 "$build/tests/flashjit_gpu_tests" "[cascade]" | tail -1
    FLASHJIT_MERGE_CHUNKS=$c "$build/tools/bench/flashjit_bench_cascade" --dry-run
  done
  "$build/flashjit" cache build --arch sm_90a --model cache/manifests/llama-3.1-8b.json
  FLASHJIT_LIBRARY="$PWD/$build/libflashjit.so" python3 tests/python/prewarm_gpu_suite.py | tail -1
  # Kernels keyed for other template sets (every template edit re-keys them) would only
  # make the staged cache larger.
  "$build/flashjit" cache prune
  rm -rf "$stage" && mkdir -p "$stage"
  cp -a "$build"/tests/flashjit_gpu_tests "$build"/flashjit_demo "$build"/flashjit \
    "$build"/libflashjit.so* "$build"/tools/bench/flashjit_bench_* "$stage"/
  [ -x "$build/tests/c_api/flashjit_c_overhead" ] && cp -a "$build/tests/c_api/flashjit_c_overhead" "$stage"/
  # The Python package's compiled fast path, found beside the library it loads.
  cp -a "$build"/_flashjit_fast*.so "$stage"/ 2>/dev/null || true
  cp -a "$build/gpu-cache" "$stage/gpu-cache"
  # The per-variant compile lock files are empty and only needed where kernels compile.
  rm -rf "$stage/gpu-cache/locks"
  if command -v strip > /dev/null; then
    strip --strip-unneeded "$stage"/flashjit_* "$stage"/libflashjit.so.*.*.* 2> /dev/null || true
  fi
  du -sh "$stage"
  mkdir -p build-pack
  tar czf "build-pack/$(basename "$stage").tar.gz" "$stage"
  du -sh "build-pack/$(basename "$stage").tar.gz"
  exit 0
fi

stage=${2:-build-stage}
out=${OUT:-$stage/logs}
mkdir -p "$out"
export FLASHJIT_CACHE_DIR="$PWD/$stage/gpu-cache" FLASHJIT_LIBRARY="$PWD/$stage/libflashjit.so"
export FLASHJIT_C_OVERHEAD="$PWD/$stage/flashjit_c_overhead" PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="$PWD/$stage${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# memcheck: the whole suite but its longest cases (every tuning variant; 16k tokens); the sampling
# distribution cases run with 4096 draws per case instead of 1 M (FLASHJIT_SAMPLING_DRAWS).
heavy='~"norm: every swept variant matches the reference"~"append_paged_kv_cache: 1 to 16k tokens"~"rope: 16k tokens, every form, against the fp64 reference"~"rmsnorm at 16k tokens"~"fused add, layernorm and QK-norm at 16k tokens"~"pdl: large layer-op chain back to back"'
section() { echo; echo "==== $* ($(date +%T))"; }
skip() { [[ " ${SKIP:-} " == *" $1 "* ]]; }  # SKIP="bench cascade-ab torch python overhead-ab sanitize"
{
  section device
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
  # Most of the suite's time is its CPU references (fp64, one thread per process): each case
  # runs in its own process, TEST_JOBS at a time (longest first), and the summary is printed in
  # the suite's order. TEST_JOBS=1 is the one-process run.
  jobs=${TEST_JOBS:-8}
  section "GPU tests (JIT disabled, no compile allowed; one process per case, $jobs at a time)"
  if [ "$jobs" -le 1 ]; then
    FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 420 "$stage/flashjit_gpu_tests" --durations yes
    echo "gpu tests exit: $?"
  else
    cases=$(mktemp -d)
    # (the listing also carries the test binary's own seed and engine lines)
    suite_cases "$stage/flashjit_gpu_tests" >"$cases/names"
    # Case i is line i of names; the cases known to take 10 s or more start first.
    slow='exact|ragged|16k tokens|mixed lengths|every swept|fp8 KV|dtypes and head dims'
    { grep -nE "$slow" "$cases/names"; grep -nvE "$slow" "$cases/names"; } | cut -d: -f1 >"$cases/order"
    run_case() {  # $1: the case's line in names (a Catch2 test spec needs its commas escaped)
      local name
      name=$(sed -n "$1p" "$cases/names")
      FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 420 "$stage/flashjit_gpu_tests" \
        --durations yes "${name//,/\\,}" >"$cases/$1.log" 2>&1
      echo "exit $?" >>"$cases/$1.log"
    }
    export -f run_case
    export stage cases
    xargs -P "$jobs" -I{} bash -c 'run_case {}' <"$cases/order"
    failed=0 passed=0 assertions=0 compiles=0 i=0
    while IFS= read -r name; do
      i=$((i + 1))
      log="$cases/$i.log"
      rc=$(sed -n 's/^exit //p' "$log")
      a=$(sed -n 's/^All tests passed (\([0-9]*\) assertion.*/\1/p' "$log")
      c=$(sed -n 's/^engine: \([0-9]*\) compiles.*/\1/p' "$log")
      d=$(grep -m1 -E '^[0-9.]+ s: ' "$log" | cut -d' ' -f1)
      seed=$(sed -n 's/^GPU tests: seed \([0-9]*\).*/\1/p' "$log")
      compiles=$((compiles + ${c:-0}))
      if [ "$rc" = 0 ] && [ -n "$a" ]; then
        passed=$((passed + 1)) assertions=$((assertions + a))
        printf 'PASS %8s s %7s assertions  seed %-10s  %s\n' "${d:-?}" "$a" "$seed" "$name"
      else
        failed=$((failed + 1))
        printf 'FAIL (exit %s)  %s\n' "$rc" "$name"
        sed 's/^/    | /' "$log"
      fi
    done <"$cases/names"
    echo "gpu tests: $passed cases passed, $failed failed, $assertions assertions, $compiles NVRTC compiles"
    echo "gpu tests exit: $failed"
    rm -rf "$cases"
  fi
  section demo
  timeout 60 "$stage/flashjit_demo"
  echo "demo exit: $?"
} 2>&1 | tee "$out/tests.log"
skip bench || {
  for b in engine launch norm rope activation page decode sampling cascade pdl; do
    section "bench $b"
    FLASHJIT_DISABLE_JIT=1 OUT= timeout 90 "$stage/flashjit_bench_$b"
  done
  # A/B: the merge with 1, 2 and 4 vectors per lane (tests and bench); SKIP="cascade-ab" leaves
  # it out.
  skip cascade-ab || {
    for c in 1 2 4; do
      section "cascade, FLASHJIT_MERGE_CHUNKS=$c: tests, then bench"
      FLASHJIT_MERGE_CHUNKS=$c FLASHJIT_DISABLE_JIT=1 FLASHJIT_EXPECT_NO_COMPILE=1 timeout 60 \
        "$stage/flashjit_gpu_tests" "[cascade]" | tail -3
      FLASHJIT_MERGE_CHUNKS=$c FLASHJIT_DISABLE_JIT=1 OUT= timeout 60 "$stage/flashjit_bench_cascade"
    done
    section "bench cascade, default again"
    FLASHJIT_DISABLE_JIT=1 OUT= timeout 60 "$stage/flashjit_bench_cascade"
  }
} 2>&1 | tee "$out/bench.log"
skip torch || {
  for t in layer_ops decode sampling cascade; do
    section "torch $t"
    timeout 120 python3 "tools/bench/torch_$t.py"
  done
} 2>&1 | tee "$out/torch.log"
skip python || {
  section pytest
  # test_packed_call / test_signed_bundles / test_library compile their dry-run kernels with
  # NVRTC here (tens of seconds): hence the longer limit.
  (cd tests/python && timeout 300 python3 -m pytest -q -x --durations=8 2>&1 | tail -40)
  section "llama decode step"
  timeout 60 python3 python/examples/llama_decode_step.py
  section "python overhead"
  timeout 90 python3 tools/bench/python_overhead.py
  # A/B: the extension reading tensors through the accessors instead of the DLPack C exchange
  # API, then the default again (the host is noisy from run to run). SKIP="overhead-ab" leaves
  # these out.
  skip overhead-ab || {
    section "python overhead, accessors (FLASHJIT_PYTHON_DLPACK_API=0)"
    FLASHJIT_PYTHON_DLPACK_API=0 timeout 90 python3 tools/bench/python_overhead.py
    section "python overhead, again"
    timeout 90 python3 tools/bench/python_overhead.py
    section "python call parts"
    timeout 60 python3 tools/bench/python_call_parts.py
    section "python overhead, dry run (host cost without the launch, same CPU)"
    timeout 120 python3 tools/bench/python_overhead.py --dry-run
  }
} 2>&1 | tee "$out/python.log"
skip sanitize || {
  section "memcheck"
  FLASHJIT_DISABLE_JIT=1 FLASHJIT_SAMPLING_DRAWS=4096 timeout 230 compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$stage/flashjit_gpu_tests" "${MEMCHECK_TESTS:-$heavy}" 2>&1 | tail -8
  echo "memcheck exit: ${PIPESTATUS[0]}"
  section "racecheck"
  FLASHJIT_DISABLE_JIT=1 timeout "${RACECHECK_TIMEOUT:-90}" compute-sanitizer --tool racecheck --error-exitcode 3 \
    "$stage/flashjit_gpu_tests" "${RACECHECK_TESTS:-*renorm*,*mask logits*,*bad rows*,single decode: dtypes*,*CUDA graph*,*QK-norm*,[page],[activation]}" 2>&1 | tail -8
  echo "racecheck exit: ${PIPESTATUS[0]}"
} 2>&1 | tee "$out/sanitizer.log"
