#!/usr/bin/env bash
# The test command: set up, build everything, run the cpu tests, and the gpu tests when a device exists.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build_dir=${SPADE_BUILD_DIR:-build}
if reason=$("$build_dir/tools/spade" device 2>&1); then
  echo "$reason"
  ctest --test-dir "$build_dir" --output-on-failure -j 2
else
  echo "GPU tests skipped: no CUDA device found (${reason#no GPU: })"
  ctest --test-dir "$build_dir" --output-on-failure -j 2 -L cpu
fi
