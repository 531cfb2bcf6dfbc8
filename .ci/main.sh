#!/usr/bin/env bash
# The README's main command: install, build, prewarm the default cache for the bundled model
# manifest, show the configuration, and on a machine with a GPU run the checked demo.
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target flashjit_cli flashjit_demo
./build/flashjit cache build --arch "${FLASHJIT_ARCH:-sm_90a}" --model cache/manifests/llama-3.1-8b.json
./build/flashjit show-config
./build/flashjit_demo
