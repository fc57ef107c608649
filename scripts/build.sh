#!/usr/bin/env bash
# Configures and builds Spade into ${SPADE_BUILD_DIR:-build} (CUDA when nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${SPADE_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${SPADE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "$@"
