#!/usr/bin/env bash
# The test command: set up, build, run the cpu tests, and the gpu tests when a device exists.
# Without a device the gpu suites are not compiled (they could not run); .ci/run compiles them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build_dir=${SPADE_BUILD_DIR:-build}
scripts/build.sh --target spade_tool  # the library and the tool, to ask for a device
if reason=$("$build_dir/tools/spade" device 2>&1); then
  SPADE_CMAKE_ARGS="${SPADE_CMAKE_ARGS:-} -DSPADE_GPU_TESTS_IN_ALL=ON" scripts/build.sh
  echo "$reason"
  ctest --test-dir "$build_dir" --output-on-failure -j 2
else
  SPADE_CMAKE_ARGS="${SPADE_CMAKE_ARGS:-} -DSPADE_GPU_TESTS_IN_ALL=OFF" scripts/build.sh
  echo "GPU tests skipped: no CUDA device found (${reason#no GPU: })"
  ctest --test-dir "$build_dir" --output-on-failure -j 2 -L cpu
fi
