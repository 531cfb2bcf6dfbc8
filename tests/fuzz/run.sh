#!/usr/bin/env bash
# Builds the fuzzers in build-fuzz/ (clang-14, ASan+UBSan, libFuzzer) and runs each for
# SECONDS seconds (default 60), one at a time at the lowest priority, on its corpus under
# tests/fuzz/corpus/<target>/. New inputs go to build-fuzz/corpus-new/<target>/ (merge the small,
# interesting ones back by hand); crashes are written to build-fuzz/crashes/.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-60}"; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(fuzz_spec fuzz_manifest fuzz_op_args fuzz_bundle)
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFLASHJIT_BUILD_FUZZERS=ON -DFLASHJIT_SANITIZE=ON -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
    >/dev/null
fi
nice -n 19 ninja -C build-fuzz "${targets[@]}" fuzz_make_bundle_seed >/dev/null
mkdir -p tests/fuzz/corpus/fuzz_bundle build-fuzz/crashes
[ -f tests/fuzz/corpus/fuzz_bundle/seed.fjb ] || build-fuzz/tests/fuzz/fuzz_make_bundle_seed tests/fuzz/corpus/fuzz_bundle/seed.fjb
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export FLASHJIT_LOG_LEVEL=error
for t in "${targets[@]}"; do
  mkdir -p "tests/fuzz/corpus/$t" "build-fuzz/corpus-new/$t"
  nice -n 19 "build-fuzz/tests/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 \
    -max_len=4096 -timeout=10 -artifact_prefix="build-fuzz/crashes/$t-" \
    "build-fuzz/corpus-new/$t" "tests/fuzz/corpus/$t" 2>&1 | tee "build-fuzz/$t.log" | \
    grep -E "^(stat::number_of_executed_units|==|SUMMARY|Done)" || true
done
