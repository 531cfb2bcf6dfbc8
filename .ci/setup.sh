#!/usr/bin/env bash
# Installs what flashjit needs on a fresh Debian 12 machine that has the CUDA toolkit
# (nvcc/NVRTC under /usr/local/cuda or $CUDA_HOME). Safe to run again.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config libfmt-dev nlohmann-json3-dev libsqlite3-dev libssl-dev \
  catch2 libdlpack-dev python3 python3-pytest python3-dev >/dev/null
if ! ls "${CUDA_HOME:-/usr/local/cuda}/include/nvrtc.h" >/dev/null 2>&1; then
  echo "CUDA toolkit not found at ${CUDA_HOME:-/usr/local/cuda}: install the CUDA toolkit (NVRTC) and set CUDA_HOME" >&2
  exit 1
fi
