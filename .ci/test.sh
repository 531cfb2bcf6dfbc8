#!/usr/bin/env bash
# The README's test command: install, build (Release), run every test. GPU tests skip (ctest
# exit code 77) on machines with no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
cd build && ctest --output-on-failure -j"$(nproc)" --timeout 900
