#!/usr/bin/env bash
# Installs a build of Spade to a scratch prefix and builds a consumer with find_package(spade),
# and another through add_subdirectory: both must compile, link and run.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
cmake -S tests/install -B "$scratch/find" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/find" >/dev/null
"$scratch/find/consumer"
cmake -S tests/install -B "$scratch/sub" -G Ninja -DSPADE_CONSUMER_ADD_SUBDIRECTORY="$PWD" \
  ${SPADE_CMAKE_ARGS:-} >/dev/null
cmake --build "$scratch/sub" --target consumer >/dev/null
"$scratch/sub/consumer"
# As a subdirectory Spade leaves the parent's build type alone and adds no header check.
if grep -q '^CMAKE_BUILD_TYPE:STRING=.\+' "$scratch/sub/CMakeCache.txt"; then
  echo "install check: add_subdirectory(spade) set the parent's CMAKE_BUILD_TYPE" >&2
  exit 1
fi
if grep -q 'spade_header_check' "$scratch/sub/build.ninja"; then
  echo "install check: add_subdirectory(spade) added the header-check target" >&2
  exit 1
fi
echo "install check: find_package(spade) and add_subdirectory consumers built and ran"
